// A real redis-server for tests: started by the test in a temporary
// directory, listening on a unix socket there (or a free loopback port),
// without persistence; stopped (or killed, paused, restarted) by the test.
#pragma once

#include "cqmgr/cluster/redis_reply.hpp"
#include "cqmgr/test/temp_dir.hpp"

#include <string>
#include <sys/types.h>
#include <vector>

namespace cqmgr::cluster::testing {

class RedisServer {
  public:
    enum class Listen { unix_socket, loopback };
    explicit RedisServer(Listen how = Listen::unix_socket);
    ~RedisServer();

    // True when redis-server is installed (tests skip themselves if not).
    static bool available();

    // Starts the server and waits until it accepts connections; `extra`
    // are more redis-server options (e.g. --replicaof HOST PORT).
    void start(const std::vector<std::string>& extra = {});
    // Starts a sentinel (loopback only) that watches the master `name` at
    // `master` with a quorum of 1, and declares it down after 500 ms.
    void start_sentinel(const std::string& name, const std::string& master);
    // SIGKILL, and wait for it to be gone.
    void kill();
    // SIGSTOP / SIGCONT: a server that is there but does not answer.
    void pause();
    void resume();

    // What cqmgr_redis_server would say: "unix:/tmp/.../redis.sock" or
    // "127.0.0.1:PORT".
    std::string address() const;
    pid_t pid() const { return pid_; }
    int port() const { return port_; }
    // Sends one command over a blocking connection of its own (test set-up:
    // REPLICAOF, SENTINEL ...); a failure if there is no answer in 2 s.
    RedisReply ask(const std::vector<std::string>& args) const;

  private:
    bool accepting() const;
    void spawn(std::vector<std::string> args);
    Listen how_;
    cqmgr::test::TempDir tmp_{"cqmgr-redis"};
    std::string dir_ = tmp_.str();
    int port_ = 0;
    pid_t pid_ = -1;
};

} // namespace cqmgr::cluster::testing
