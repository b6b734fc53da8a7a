#include "arrival_index.hpp"

#include "log.hpp"

namespace cqmgr::qmgr {

void ArrivalIndex::add(Message& m) {
    if (m.arrival_hook.is_linked()) log::panic("arrival index: " + m.id + " added twice");
    // Messages mostly arrive in time order, so the hint is usually right.
    auto at = by_second_.try_emplace(by_second_.end(), m.env.arrival_sec);
    at->second.push_back(m);
}

void ArrivalIndex::remove(Message& m) {
    if (!m.arrival_hook.is_linked()) log::panic("arrival index: " + m.id + " was never added");
    auto at = by_second_.find(m.env.arrival_sec);
    if (at == by_second_.end())
        log::panic("arrival index: " + m.id + " is not in its second's bucket");
    at->second.erase(at->second.iterator_to(m));
    if (at->second.empty()) by_second_.erase(at);
}

std::optional<protocol::TimeVal> ArrivalIndex::oldest() const {
    for (const auto& [sec, bucket] : by_second_) {
        const Message* first = nullptr;
        for (const Message& m : bucket)
            if (!first || m.env.arrival_usec < first->env.arrival_usec) first = &m;
        if (first) return protocol::TimeVal{sec, first->env.arrival_usec};
    }
    return std::nullopt;
}

} // namespace cqmgr::qmgr
