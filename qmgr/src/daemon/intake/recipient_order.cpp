#include "recipient_order.hpp"

#include "address.hpp"
#include "cqmgr/common/address.hpp"

#include <algorithm>
#include <string>
#include <string_view>

namespace cqmgr::qmgr {

namespace {
// The key recipients are sorted by: the domain of an address, or all of an
// address that has no '@'.
std::string_view sort_domain(std::string_view address) {
    auto parts = split_address(address);
    return parts.has_at ? parts.domain : address;
}
} // namespace

// The domains are compared where they lie (a batch may hold 5,000
// recipients: no copy each), lower-cased copies made only when one has a
// capital; a batch already in order is left as it is.
void sort_by_domain(std::vector<queuefile::Recipient>& rcpts) {
    if (rcpts.size() < 2) return;
    const size_t n = rcpts.size();
    std::vector<std::string_view> domain(n);
    bool capitals = false;
    for (size_t i = 0; i < n; ++i) {
        domain[i] = sort_domain(rcpts[i].address());
        for (char c : domain[i])
            capitals |= c >= 'A' && c <= 'Z';
    }
    std::vector<std::string> lowered;
    if (capitals) {
        lowered.reserve(n);
        for (size_t i = 0; i < n; ++i) {
            lowered.push_back(lower(domain[i]));
            domain[i] = lowered.back();
        }
    }
    auto before = [&](size_t a, size_t b) {
        if (int c = domain[a].compare(domain[b]); c != 0) return c < 0;
        return rcpts[a].address() < rcpts[b].address();
    };
    bool sorted = true;
    for (size_t i = 1; sorted && i < n; ++i)
        sorted = !before(i, i - 1);
    if (sorted) return;
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), before);
    std::vector<queuefile::Recipient> out;
    out.reserve(n);
    for (size_t i : order)
        out.push_back(std::move(rcpts[i]));
    rcpts = std::move(out);
}

} // namespace cqmgr::qmgr
