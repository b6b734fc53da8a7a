// Answers one request line of the control socket: parses it, answers a
// query from ControlQueries, hands a command to the command handler, and
// turns every outcome (a parse error, an exception) into one reply line.
#pragma once

#include "control_queries.hpp"

#include <array>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace cqmgr::qmgr {

class ControlDispatch {
  public:
    // Executes a command (suspend, resume, flush, throttle, unthrottle) for
    // the client with user ID `uid` and returns its reply.
    using CommandHandler = std::function<nlohmann::json(const control::Request&, uid_t uid)>;

    ControlDispatch(const ControlQueries& queries, CommandHandler commands = {})
        : queries_(queries), commands_(std::move(commands)) {}

    // Sets the command handler (none: commands get "not available").
    void set_commands(CommandHandler h) { commands_ = std::move(h); }

    // The reply line (with its newline) to the request `line` (without
    // its newline) from user `uid`.
    std::string answer(std::string_view line, uid_t uid) const;

  private:
    const ControlQueries& queries_;
    CommandHandler commands_;
    // The size of the last reply to each query, by verb.
    mutable std::array<std::size_t, 16> size_hints_{};
};

} // namespace cqmgr::qmgr
