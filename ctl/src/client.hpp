// One connection to the daemon's control socket: request lines out, one
// JSON line back for each (docs/control-protocol.md, "Framing").  Blocking,
// with a deadline per reply: cqmgrctl has nothing else to do meanwhile.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>

namespace cqmgr::ctl {

// Talking to the daemon failed.  Connect: no connection was made (no
// socket, refused, permission); Io: the connection failed or timed out;
// Protocol: the reply was not one JSON object on a line.
struct ControlError : std::runtime_error {
    enum class Kind { Connect, Io, Protocol };
    ControlError(Kind kind, const std::string& text) : std::runtime_error(text), kind(kind) {}
    Kind kind;
};

class Client {
  public:
    explicit Client(std::string path);
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    // Connects (again, after close()).  Throws ControlError(Connect).
    void connect();
    // Sends `line` (no newline) and waits up to `timeout` for the reply,
    // over a new connection when cqmgr has closed the last one (it closes
    // connections that sent nothing for max_idle seconds, and a reload
    // replaces the daemon).  Throws ControlError(Io or Protocol); the
    // connection is closed then.
    nlohmann::json request(const std::string& line, std::chrono::milliseconds timeout);
    // The last reply's line as the daemon sent it (without the newline):
    // what --json prints, so that its keys keep the daemon's order.
    const std::string& last_reply() const { return last_reply_; }
    void close();
    bool connected() const { return fd_ >= 0; }
    const std::string& path() const { return path_; }

  private:
    // Throws ControlError(Io) after closing the connection.
    [[noreturn]] void fail(const std::string& text);
    // True when cqmgr has closed the connection (checked without waiting).
    bool peer_closed() const;
    // Waits until fd_ is ready for `events` or the deadline passes.
    void wait(short events, std::chrono::steady_clock::time_point deadline);

    std::string path_;
    int fd_ = -1;
    std::string buffer_; // bytes read past the last reply's newline
    std::string last_reply_;
};

// A reply of more than this many bytes is refused (a broken peer).
inline constexpr size_t max_reply_bytes = 256u << 20;

// The hint printed after a failed connect.
inline constexpr const char* connect_hint =
    "is cqmgr running as the qmgr service, with this control socket? The socket is "
    "served to root and mail_owner only: are you one of them?";

} // namespace cqmgr::ctl

namespace cqmgr::ctl {

// The error text of a reply whose "ok" is not true ("reply without ok"
// when it lacks one), or nullopt for a good reply.
std::optional<std::string> reply_error(const nlohmann::json& reply);

} // namespace cqmgr::ctl
