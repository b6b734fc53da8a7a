#include "arrival_index.hpp"

#include "log.hpp"

namespace cqmgr::qmgr {

void ArrivalIndex::add(Message& m) {
    if (m.arrival_hook.is_linked()) log::panic("arrival index: " + m.id + " added twice");
    order_.insert(m);
}

void ArrivalIndex::remove(Message& m) {
    if (!m.arrival_hook.is_linked()) log::panic("arrival index: " + m.id + " was never added");
    order_.erase(order_.iterator_to(m));
}

std::optional<protocol::TimeVal> ArrivalIndex::oldest() const {
    if (order_.empty()) return std::nullopt;
    const Message& m = *order_.begin();
    return protocol::TimeVal{m.env.arrival_sec, m.env.arrival_usec};
}

} // namespace cqmgr::qmgr
