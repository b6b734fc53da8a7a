// The queue gauges: cqmgr_queue_messages{queue} and
// cqmgr_queue_oldest_age_seconds{queue} for incoming, active and deferred,
// as the Postfix exporters and Telegraf's postfix input report them, but
// from what the daemon knows already, never from a walk of the queue per
// scrape:
//   - incoming and deferred: the census their scans keep
//     (queue_scanner.hpp): each directory as its latest listing found it,
//     less the files taken since.  It is as fresh as the last pass of the
//     scan over that directory: the incoming scan runs on every new
//     message, the deferred one every queue_run_delay (with the due
//     index, over the directories that changed).  A file another program
//     adds or removes is counted from the next pass; a file the queue
//     manager defers, likewise.  While the active queue is full the scans
//     wait, and so do these two.  The oldest age is that of the earliest
//     birth time among the files (renames keep it: for a queue file, when
//     cleanup wrote it, which is when the message arrived); where the file
//     system keeps no birth time there is no oldest age.
//   - active: the messages in memory (and any files a previous queue
//     manager left in active/ that are still to be taken), exact at each
//     scrape; the oldest age is by the messages' arrival times.
#pragma once

#include "cqmgr/protocol/messages.hpp"
#include "cqmgr/queuefile/queue_scanner.hpp"
#include "metrics.hpp"

#include <array>
#include <optional>
#include <prometheus/metric_family.h>
#include <vector>

namespace cqmgr::qmgr {

// incoming/ or deferred/ from its scan's census, at `now` (Unix seconds).
MetricsSnapshot::Queue census_gauge(const queuefile::QueueScanner::Census& c, int64_t now);
// active/: `messages`, the oldest of which arrived at `oldest` (none: the
// queue is empty, or only files left by a predecessor are there).
MetricsSnapshot::Queue active_gauge(size_t messages, std::optional<protocol::TimeVal> oldest,
                                    protocol::TimeVal now);
// The gauges of incoming, active and deferred at `now`, in that order: the
// two scans' census (none before a scan's first pass), and the `active`
// messages in memory, the oldest of which arrived at `oldest_active`.  The
// metrics and the control socket's summary show the same numbers.
std::array<std::optional<MetricsSnapshot::Queue>, 3>
queue_gauges(const std::optional<queuefile::QueueScanner::Census>& incoming, size_t active,
             std::optional<protocol::TimeVal> oldest_active,
             const std::optional<queuefile::QueueScanner::Census>& deferred, protocol::TimeVal now);
// Appends the two families of `s.queues` (the queues known so far).
void queue_families(std::vector<prometheus::MetricFamily>& out, const MetricsSnapshot& s);

} // namespace cqmgr::qmgr
