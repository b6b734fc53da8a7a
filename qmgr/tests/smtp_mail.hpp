// Mail for the limits' tests (cluster_limits_test.cpp, providers_test.cpp):
// a message of one-recipient entries for one queue of the smtp transport,
// straight into a scheduler core.
#pragma once

#include "cqmgr/core/scheduler.hpp"

#include <memory>
#include <string>
#include <vector>

namespace cqmgr::qmgr::testing {

// `n` one-recipient entries of a new message for `queue`, kept in `msgs`.
inline void smtp_mail(core::Scheduler& sched, std::vector<std::unique_ptr<core::Message>>& msgs,
                      int n, const std::string& queue) {
    auto m = std::make_unique<core::Message>();
    m->id = "M" + std::to_string(msgs.size());
    sched.message_add(*m);
    core::Transport& t = sched.transport("smtp");
    for (int i = 0; i < n; i++) {
        std::string a = m->id + "-" + std::to_string(i) + "@" + queue;
        sched.assign(*m, sched.queue_for(t, queue, queue), core::Recipient(0, a, a, "", 0));
    }
    sched.batch_done(*m, false, 0);
    msgs.push_back(std::move(m));
}

} // namespace cqmgr::qmgr::testing
