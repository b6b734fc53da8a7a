// A private redis-server for a run: on a unix socket in the run's
// directory, no persistence, stopped with the object. cqmgr's cluster
// limits talk to it (--cluster, the soak); the soak also restarts it
// empty while cqmgr runs.
#pragma once

#include "process.hpp"

#include <string>

namespace bench {

class RedisServer {
  public:
    // Starts redis-server on DIR/redis.sock (open to every user: cqmgr
    // connects as the mail owner) and waits until it listens.
    explicit RedisServer(const std::string& dir);
    RedisServer(const RedisServer&) = delete;
    RedisServer& operator=(const RedisServer&) = delete;
    ~RedisServer();

    // Stops the server and starts a new, empty one on the same socket.
    void restart();
    const std::string& socket() const { return socket_; }

  private:
    void start();

    std::string dir_;
    std::string socket_;
    compat::Process proc_;
};

} // namespace bench
