// The warnings a table or classifier gives a test, in order.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace cqmgr::qmgr::testing {

struct Warnings {
    std::vector<std::string> seen;
    // A warning callback that keeps what it is given.
    std::function<void(const std::string&)> fn() {
        return [this](const std::string& w) { seen.push_back(w); };
    }
};

} // namespace cqmgr::qmgr::testing
