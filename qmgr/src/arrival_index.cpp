#include "arrival_index.hpp"

#include "log.hpp"

namespace cqmgr::qmgr {

// Erases one occurrence: two messages may share an arrival time.
void ArrivalIndex::remove(protocol::TimeVal arrival) {
    auto it = times_.find({arrival.sec, arrival.usec});
    if (it == times_.end())
        log::panic("arrival index: no message arrived at " + std::to_string(arrival.sec) + "." +
                   std::to_string(arrival.usec));
    times_.erase(it);
}

} // namespace cqmgr::qmgr
