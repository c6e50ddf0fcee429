// What the wizard's Start did besides queueing, shown above the queue.

/** What Start did besides queueing, one sentence each ("Removed
 * jax==0.6.1's environment (913 MiB, …) …."). */
export function StartNotices({ notices }: { notices: string[] }) {
  return (
    <>
      {notices.map((n) => (
        <p key={n} class="notice queue-notice">
          {n.length > 0 ? `${n[0].toUpperCase()}${n.slice(1)}.` : ""}
        </p>
      ))}
    </>
  );
}
