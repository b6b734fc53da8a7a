#include "error.hpp"

#include <cerrno>
#include <cstring>

namespace compat {

// Formats the current errno into an Error, so call sites stay one line.
Error sys_error(const std::string& what) {
    return Error(what + ": " + std::strerror(errno));
}

} // namespace compat
