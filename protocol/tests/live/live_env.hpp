// One private Postfix 3.7 instance for the whole live suite, with no queue
// manager (the qmgr service runs a stub that only waits for master to go
// away), so that the tests can hand queue files to the real agents and talk
// to the real trivial-rewrite, bounce/defer/trace, verify and flush daemons
// themselves.  The working directory is the instance's queue directory, as
// it is for qmgr, so clients use "private/<service>" paths.
#pragma once

#include "cqmgr/protocol/asio.hpp"
#include "cqmgr/protocol/messages.hpp"
#include "queue_file.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace live {

using cqmgr::awaitable;
namespace asio = boost::asio;

struct Ports {
    std::uint16_t smtpd = 0;
    std::uint16_t sink = 0;   // smtp-sink that accepts everything
    std::uint16_t slow = 0;   // smtp-sink that sits on DATA for 30 s
    std::uint16_t reject = 0; // smtp-sink that rejects RCPT with 5xx
    std::uint16_t dead = 0;   // nothing listens here
};

// The instance and its surroundings; valid while the suite runs.
struct Env {
    std::string dir;       // instance top directory
    std::string queue_dir; // also the working directory
    std::string conf_dir;
    Ports ports;
};
const Env& env();

// Runs `task` on a fresh io_context until it finishes or `limit` passes
// (then the test fails with an exception).
template <class T>
T run(awaitable<T> task, std::chrono::milliseconds limit = std::chrono::seconds(30)) {
    asio::io_context io;
    std::optional<T> result;
    std::exception_ptr error;
    asio::co_spawn(io, std::move(task), [&](std::exception_ptr e, T v) {
        error = e;
        result = std::move(v);
    });
    io.run_for(limit);
    if (error) std::rethrow_exception(error);
    if (!result) throw std::runtime_error("coroutine did not finish within the time limit");
    return std::move(*result);
}

// Submits one message over SMTP to the instance's smtpd and returns its
// queue ID once cleanup has committed it to incoming/.
std::string submit(const std::string& from, const std::vector<std::string>& to,
                   const std::string& subject, const std::string& body = "hello\n");

// Moves incoming/ID to active/ID, as qmgr would.
void activate(const std::string& id);

// submit() then activate().
std::string submit_active(const std::string& from, const std::vector<std::string>& to,
                          const std::string& subject);

// The delivery request stock qmgr would build for every recipient of active/ID.
cqmgr::protocol::DeliveryRequest request_for(const std::string& id, const std::string& nexthop);

// Queue files in incoming/ that were not there in `before`.
std::vector<std::string> incoming_ids();
std::vector<std::string> new_incoming(const std::vector<std::string>& before);

// The path of a per-message log (`bounce`, `defer`, `trace`) for ID, with
// the instance's hashing (defer is hashed at depth 1).
std::string log_path(const std::string& queue, const std::string& id);

// Waits up to `limit` for the maillog to contain `needle`; returns the line.
std::optional<std::string> wait_for_log(const std::string& needle,
                                        std::chrono::milliseconds limit = std::chrono::seconds(10));

// `postconf -c conf -h NAME`, and with -x (expanded).
std::string postconf(const std::string& name);
std::string postconf_expanded(const std::string& name);
// `postmap -q KEY TABLE` (nullopt when not found).
std::optional<std::string> postmap_query(const std::string& key, const std::string& table);

// Reads a whole file ("" if missing).
std::string slurp(const std::string& path);
bool exists(const std::string& path);

} // namespace live
