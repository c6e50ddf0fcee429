use super::*;

#[test]
fn dates_and_letters() {
    assert_eq!(utc_text(0), "1970-01-01 00:00 UTC");
    assert_eq!(utc_text(1_795_348_257_707), "2026-11-22 11:50 UTC");
    assert_eq!(utc_text(951_782_400_000), "2000-02-29 00:00 UTC");
    assert_eq!(letter(0), "A");
    assert_eq!(letter(25), "Z");
    assert_eq!(letter(26), "AA");
    assert_eq!(letter(27), "AB");
}
