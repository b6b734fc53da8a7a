// Loopback TCP ports: allocation of free ports and detection of listeners.
#pragma once

#include <atomic>
#include <cstdint>
#include <sys/types.h>
#include <thread>
#include <vector>

namespace compat {

// Returns `count` distinct free TCP ports on 127.0.0.1 (bind to port 0, read back, close).
std::vector<std::uint16_t> allocate_ports(std::size_t count);

// True if some socket is in LISTEN state on 127.0.0.1:port or 0.0.0.0:port,
// judged from /proc/net/tcp so that no probe connection is made.
bool is_listening(std::uint16_t port);

// Socket inodes of ESTABLISHED TCP connections whose remote side is 127.0.0.1:port
// (i.e. the client ends of connections to a local server on that port).
std::vector<unsigned long> client_socket_inodes(std::uint16_t port);

// True if process `pid` has one of the socket `inodes` open.
bool process_has_socket(pid_t pid, const std::vector<unsigned long>& inodes);

// Number of ESTABLISHED TCP connections whose local (server) side is 127.0.0.1:port.
int established_connections(std::uint16_t port);

// Samples established_connections() for a set of ports in a background thread
// (every 50 ms) and remembers the peak per port, counting only what was seen in
// two consecutive samples (so a connection lasting < 50 ms may not count).
class ConnectionSampler {
  public:
    explicit ConnectionSampler(std::vector<std::uint16_t> ports);
    ConnectionSampler(const ConnectionSampler&) = delete;
    ConnectionSampler& operator=(const ConnectionSampler&) = delete;
    ~ConnectionSampler(); // stops the thread
    void stop() noexcept;
    // Highest simultaneous count seen for ports[i] so far.
    int peak(std::size_t i) const;

  private:
    void loop();
    std::vector<std::uint16_t> ports_;
    std::vector<std::atomic<int>> peaks_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

} // namespace compat
