// A real redis-server for tests: started by the test in a temporary
// directory, listening on a unix socket there (or a free loopback port),
// without persistence; stopped (or killed, paused, restarted) by the test.
#pragma once

#include <string>
#include <sys/types.h>

namespace cqmgr::cluster::testing {

class RedisServer {
  public:
    enum class Listen { unix_socket, loopback };
    explicit RedisServer(Listen how = Listen::unix_socket);
    ~RedisServer();

    // True when redis-server is installed (tests skip themselves if not).
    static bool available();

    // Starts the server and waits until it accepts connections.
    void start();
    // SIGKILL, and wait for it to be gone.
    void kill();
    // SIGSTOP / SIGCONT: a server that is there but does not answer.
    void pause();
    void resume();

    // What cqmgr_redis_server would say: "unix:/tmp/.../redis.sock" or
    // "127.0.0.1:PORT".
    std::string address() const;
    pid_t pid() const { return pid_; }

  private:
    bool accepting() const;
    Listen how_;
    std::string dir_;
    int port_ = 0;
    pid_t pid_ = -1;
};

} // namespace cqmgr::cluster::testing
