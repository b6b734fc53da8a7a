// Blocking clients for what cqmgr serves beyond stock: one request line on
// the control socket (a unix socket, one JSON line per reply) and one HTTP
// GET of the metrics endpoint. The benchmark measures the daemon's side of
// both, so the client side is kept plain and synchronous.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace bench {

class ControlLink {
  public:
    // Connects to the control socket at `path`; throws compat::Error if it cannot.
    ControlLink(const std::string& path, std::chrono::milliseconds timeout);
    ControlLink(const ControlLink&) = delete;
    ControlLink& operator=(const ControlLink&) = delete;
    ~ControlLink();

    // Sends `line` (without its newline) and returns the reply line without
    // its newline; throws compat::Error on a timeout or a closed connection.
    std::string request(const std::string& line);

  private:
    int fd_ = -1;
    std::chrono::milliseconds timeout_;
    std::string buf_;
};

// GET http://127.0.0.1:PORT/PATH with HTTP/1.0; returns the body of a 200
// reply and throws compat::Error on anything else.
std::string http_get(std::uint16_t port, const std::string& path,
                     std::chrono::milliseconds timeout);

} // namespace bench
