// USDT probes of the daemon (provider `cqmgr`), for bpftrace, perf and
// SystemTap: one macro per probe, placed where the event happens.
//
// A probe is a single `nop` in the code plus an ELF note (.note.stapsdt)
// that tells a tracer where the nop is and where its arguments live; until
// a tracer attaches (and turns the nop into a breakpoint), it costs nothing
// but the evaluation of its arguments, which are all values the code has at
// hand (a pointer, an integer).  No semaphores: nothing is computed only
// for a probe's sake.  `readelf -n cqmgr` lists them; tools/cqmgr-delivery-
// latency.bt uses delivery__end.
//
// Strings are C strings (read them with bpftrace's str()); times are
// microseconds.
#pragma once

#include <sys/sdt.h>

// A message entered the active queue.  (queue_id, from_queue)
#define CQMGR_PROBE_MESSAGE_ACTIVATE(queue_id, from_queue)                                         \
    STAP_PROBE2(cqmgr, message__activate, queue_id, from_queue)

// A message left the active queue.  end: "removed", "deferred" or "corrupt".
// (queue_id, end)
#define CQMGR_PROBE_MESSAGE_DONE(queue_id, end) STAP_PROBE2(cqmgr, message__done, queue_id, end)

// A recipient was handed to the scheduler.  (queue_id, recipient, transport, queue)
#define CQMGR_PROBE_RECIPIENT_ASSIGN(queue_id, recipient, transport, queue)                        \
    STAP_PROBE4(cqmgr, recipient__assign, queue_id, recipient, transport, queue)

// An entry was handed to a delivery agent.  (transport, queue, queue_id, recipients)
#define CQMGR_PROBE_DELIVERY_START(transport, queue, queue_id, recipients)                         \
    STAP_PROBE4(cqmgr, delivery__start, transport, queue, queue_id, recipients)

// A delivery request ended.  status: the agent's status (0 = every
// recipient finished), -1 when the agent gave no valid reply, -2 when the
// request never reached it; dsn: the hop status ("" when none).
// (transport, queue, queue_id, duration_us, status, dsn)
#define CQMGR_PROBE_DELIVERY_END(transport, queue, queue_id, duration_us, status, dsn)             \
    STAP_PROBE6(cqmgr, delivery__end, transport, queue, queue_id, duration_us, status, dsn)

// Concurrency feedback moved (or kept) a destination's window.  positive:
// 1 after a success or revival, 0 after a failure.  (transport, queue, positive, window)
#define CQMGR_PROBE_FEEDBACK(transport, queue, positive, window)                                   \
    STAP_PROBE4(cqmgr, feedback, transport, queue, positive, window)

// A destination was declared dead.  (transport, queue, dsn, reason)
#define CQMGR_PROBE_DEST_DEAD(transport, queue, dsn, reason)                                       \
    STAP_PROBE4(cqmgr, dest__dead, transport, queue, dsn, reason)

// A dead destination came back.  (transport, queue)
#define CQMGR_PROBE_DEST_REVIVE(transport, queue) STAP_PROBE2(cqmgr, dest__revive, transport, queue)

// A pass over a queue directory began / ended.  (queue: "incoming" or "deferred")
#define CQMGR_PROBE_SCAN_START(queue) STAP_PROBE1(cqmgr, scan__start, queue)
#define CQMGR_PROBE_SCAN_END(queue) STAP_PROBE1(cqmgr, scan__end, queue)

// The scheduler asked for more recipients of a message.  (queue_id, limit)
#define CQMGR_PROBE_REFILL(queue_id, limit) STAP_PROBE2(cqmgr, refill, queue_id, limit)

// An MX lookup sent its query to DNS (a lookup answered from the cache, or
// joining one under way, sends none).  (domain)
#define CQMGR_PROBE_MX_LOOKUP_START(domain) STAP_PROBE1(cqmgr, mx__lookup__start, domain)

// An MX lookup ended.  outcome: "answer", "no_mx", "nxdomain", "timeout",
// "server_failure" or "busy"; hosts: how many MX hosts; duration_us: since
// the lookup began (0 from the cache or when refused); cached: 1 when the
// answer came from the cache.  (domain, outcome, hosts, duration_us, cached)
#define CQMGR_PROBE_MX_LOOKUP_DONE(domain, outcome, hosts, duration_us, cached)                    \
    STAP_PROBE5(cqmgr, mx__lookup__done, domain, outcome, hosts, duration_us, cached)
