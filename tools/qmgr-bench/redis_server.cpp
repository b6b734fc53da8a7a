#include "redis_server.hpp"

#include "clock.hpp"
#include "error.hpp"

#include <unistd.h>

namespace bench {

RedisServer::RedisServer(const std::string& dir) : dir_(dir), socket_(dir + "/redis.sock") {
    start();
}

RedisServer::~RedisServer() {
    proc_.terminate(std::chrono::seconds(2));
}

// A stopped server leaves its socket file behind; the new one replaces it,
// so readiness is the process accepting, not the file existing.
void RedisServer::restart() {
    proc_.terminate(std::chrono::seconds(2));
    ::unlink(socket_.c_str());
    start();
}

// Waits up to 10 s for the socket file.
void RedisServer::start() {
    compat::SpawnOptions o;
    o.argv = {"/usr/bin/redis-server", "--port", "0", "--save", "", "--appendonly", "no"};
    o.argv.insert(o.argv.end(), {"--unixsocket", socket_, "--unixsocketperm", "777"});
    o.output_path = dir_ + "/redis.log";
    proc_ = compat::Process::spawn(o);
    double deadline = boot_seconds() + 10;
    while (::access(socket_.c_str(), F_OK) != 0) {
        if (boot_seconds() > deadline || !proc_.running())
            throw compat::Error("expected redis-server to listen on " + socket_ +
                                " within 10 s, found nothing (log " + o.output_path + ")");
        pause(0.02);
    }
}

} // namespace bench
