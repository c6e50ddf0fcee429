//! The price table against a real SQLite file: a price that stored runs are
//! costed by is never deleted from under them.

use trainbench_store::fixtures::{write_run, FixtureRun};
use trainbench_store::{PriceDeletion, Store};

#[test]
fn a_price_in_use_is_kept_and_an_unused_one_deleted() {
    let dir = std::env::temp_dir().join(format!("trainbench-store-prices-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let mut store = Store::open(&dir.join("prices.sqlite")).expect("open");
    let used = "AWS p4d.24xlarge on-demand";
    let fixture = FixtureRun {
        price_offering: Some(used.into()),
        ..Default::default()
    };
    write_run(&mut store, &fixture).expect("a run priced by it");

    assert_eq!(
        store.delete_price(used).expect("delete"),
        PriceDeletion::InUse(1)
    );
    assert!(store.price(used).expect("read").is_some(), "kept");

    let unused = "Azure ND96isr H100 v5";
    assert!(store.price(unused).expect("read").is_some());
    assert_eq!(
        store.delete_price(unused).expect("delete"),
        PriceDeletion::Deleted
    );
    assert!(store.price(unused).expect("read").is_none(), "gone");
    assert_eq!(
        store.delete_price(unused).expect("again"),
        PriceDeletion::NotFound
    );

    // Reopening does not bring a deleted default back.
    drop(store);
    let store = Store::open(&dir.join("prices.sqlite")).expect("reopen");
    assert!(store.price(unused).expect("read").is_none());
    let _ = std::fs::remove_dir_all(&dir);
}
