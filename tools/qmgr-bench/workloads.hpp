// The benchmark's workloads (docs/performance.md); each is defined in its
// own file.
#pragma once

#include "workload.hpp"

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace bench {

struct RunResult;

// 20,000 one-recipient messages waiting in incoming, drained to one sink.
std::unique_ptr<Workload> make_flush(const Session& session);
// One message with 200,000 recipients over 1,000 destinations.
std::unique_ptr<Workload> make_fanout(const Session& session);
// 50,000 messages in deferred, their destination back up.
std::unique_ptr<Workload> make_deferred_restart(const Session& session);
// Mail arriving over SMTP while it is delivered.
std::unique_ptr<Workload> make_intake(const Session& session);
// Bulk and small mail at a destination that answers slowly.
std::unique_ptr<Workload> make_slow_receiver(const Session& session);
// Postfix's 421 experiment (adaptive limits on the cqmgr side).
std::unique_ptr<Workload> make_concurrency_421(const Session& session);
// Deferred mail for a destination that comes back (recovery ramp).
std::unique_ptr<Workload> make_outage_recovery(const Session& session);
// Urgent mail arriving during a campaign of one-recipient bulk
// messages to one destination (priority lanes on the cqmgr side).
std::unique_ptr<Workload> make_urgent_amid_bulk(const Session& session);
// A healthy destination's mail with 4 tarpits', and alone (destination
// shares on the cqmgr side).
std::unique_ptr<Workload> make_tarpit(const Session& session);
std::unique_ptr<Workload> make_tarpit_alone(const Session& session);
// The two ratios the destination shares are held to, from the runs of
// "tarpit-alone" and "tarpit" by workload name (nothing unless both ran).
void print_tarpit_targets(std::ostream& out,
                          const std::map<std::string, std::vector<RunResult>>& runs);
// Fresh mail while a large deferred backlog for dead
// destinations comes due (the dead backlog on the cqmgr side).
std::unique_ptr<Workload> make_dead_backlog(const Session& session);
// 20,000 one-recipient messages to discard(8), queue on a tmpfs.
std::unique_ptr<Workload> make_intrinsic(const Session& session);
// 2,000 messages × 50 recipients over 500 domains to discard(8),
// queue on a tmpfs.
std::unique_ptr<Workload> make_intrinsic_fanout(const Session& session);
// 20 messages × 20,000 recipients held in core.
std::unique_ptr<Workload> make_memory(const Session& session);
// The queue manager killed with 20,000 messages in active/ and
// started again.
std::unique_ptr<Workload> make_restart_active(const Session& session);
// A periodic deferred pass over 200,000 deferred messages, 1 %
// of them due.
std::unique_ptr<Workload> make_deferred_scale(const Session& session);
// A healthy destination's mail while another destination's
// receiver answers with text made to defeat a backtracking pattern, with
// adaptive limits on the cqmgr side, and the same with them off.
std::unique_ptr<Workload> make_hostile_reply(const Session& session);
std::unique_ptr<Workload> make_hostile_reply_off(const Session& session);
// Receivers that enforce limits: one provider's 50 domains behind MX
// records (dnsmasq) and a receiver that limits sessions and messages for
// all of them together; the same provider with a receiver that stops a
// sender for 2 minutes past its rate ([TSS04]); a receiving smtpd with a
// message-rate limit (adaptive limits on the cqmgr side); and two senders'
// mail to one provider (sender limits on the cqmgr side).
std::unique_ptr<Workload> make_provider(const Session& session);
std::unique_ptr<Workload> make_reply_rule(const Session& session);
std::unique_ptr<Workload> make_learned_rate(const Session& session);
std::unique_ptr<Workload> make_tenant(const Session& session);

} // namespace bench
