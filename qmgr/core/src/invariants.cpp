// A full consistency check of the scheduler's structures, for tests.
#include "cqmgr/core/scheduler.hpp"

#include <unordered_map>

namespace cqmgr::core {

void Scheduler::check_invariants() const {
    auto fail = [](const std::string& what) { panic("invariant: " + what); };
    int total_rcpts = 0;
    int total_queues = 0;
    std::unordered_map<const Message*, int> msg_rcpts, msg_entries;
    for (const auto& [name, tp] : transports_) {
        const Transport& t = *tp;
        if (t.job_list.size() != t.job_bytime.size()) fail(name + ": job lists differ in size");
        if (t.pending < 0) fail(name + ": negative pending count");
        for (const Job& j : t.job_list)
            if (j.stack_level < 0) fail(name + ": linked job with negative stack level");
        for (const auto& [m, jp] : t.job_by_message) {
            const Job& j = *jp;
            if (j.selected_entries > j.read_entries) fail(name + ": job selected more than read");
            if (j.rcpt_count < 0) fail(name + ": negative job recipient count");
            bool linked = j.transport_hook.is_linked();
            if (linked != (j.stack_level >= 0)) fail(name + ": job link state and level disagree");
            int peer_entries = 0;
            for (const Peer& p : j.peers) {
                if (p.job != &j) fail(name + ": peer points to another job");
                if (static_cast<int>(p.entries.size()) > p.refcount) fail(name + ": peer refcount too low");
                peer_entries += static_cast<int>(p.entries.size());
            }
            if (peer_entries != j.read_entries - j.selected_entries)
                fail(name + ": job todo entries " + std::to_string(peer_entries) + " != read " +
                     std::to_string(j.read_entries) + " - selected " + std::to_string(j.selected_entries));
        }
        for (const auto& [qn, qp] : t.queue_by_name) {
            const Queue& q = *qp;
            ++total_queues;
            if (q.window < 0) fail(name + "/" + qn + ": negative window");
            if (q.dead() != q.dsn.has_value()) fail(name + "/" + qn + ": dead without reason");
            for (const List<Entry, &Entry::queue_hook>* l : {&q.todo, &q.busy})
                for (const Entry& e : *l) {
                    if (e.queue != &q) fail(name + "/" + qn + ": entry on the wrong queue");
                    if (e.rcpts.empty()) fail(name + "/" + qn + ": empty entry");
                    total_rcpts += static_cast<int>(e.rcpts.size());
                    msg_rcpts[e.message] += static_cast<int>(e.rcpts.size());
                    msg_entries[e.message] += 1;
                }
        }
    }
    if (total_rcpts != recipient_count_)
        fail("recipient count " + std::to_string(recipient_count_) + " != in-core " +
             std::to_string(total_rcpts));
    if (total_queues != queue_count_) fail("queue count mismatch");
    for (const auto& [m, n] : msg_rcpts)
        if (m->rcpt_count != n) fail("message " + m->id + ": recipient count mismatch");
    for (const auto& [m, n] : msg_entries)
        if (m->refcount != n) fail("message " + m->id + ": refcount " + std::to_string(m->refcount) +
                                   " != entries " + std::to_string(n));
}

} // namespace cqmgr::core
