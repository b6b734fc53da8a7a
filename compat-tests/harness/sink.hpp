// smtp-sink processes that stand in for remote SMTP servers.
#pragma once

#include "fsutil.hpp"
#include "process.hpp"
#include "scenario.hpp"
#include "session_counter.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace compat {

class Sink {
  public:
    // `dump_dir` is created owned by `user` so smtp-sink -d/-D can write there.
    Sink(SinkSpec spec, std::uint16_t port, std::string log_path, std::string dump_dir,
         UserIds user);
    Sink(const Sink&) = delete;
    Sink& operator=(const Sink&) = delete;
    ~Sink();

    // Remembers the (expanded) smtp-sink arguments and creates the dump directory.
    void configure(const std::vector<std::string>& expanded_args);
    // Starts smtp-sink with the configured arguments and waits until it listens.
    void start();
    // configure() and start() in one step.
    void start(const std::vector<std::string>& expanded_args) {
        configure(expanded_args);
        start();
    }
    // Terminates the process by pid; safe to call twice.
    void stop() noexcept;
    // True while the smtp-sink process runs.
    bool running() { return proc_.running(); }

    const std::string& name() const { return spec_.name; }
    std::uint16_t port() const { return port_; }
    const std::string& log_path() const { return log_path_; }
    const std::string& dump_dir() const { return dump_dir_; }
    bool dumps() const { return spec_.dump; }
    // With count_sessions: the exact count (see SessionCounter), else null.
    const SessionCounter* sessions() const { return counter_.get(); }

  private:
    SinkSpec spec_;
    std::uint16_t port_;
    std::string log_path_;
    std::string dump_dir_;
    UserIds user_;
    std::vector<std::string> args_;
    bool configured_ = false;
    Process proc_;
    // With count_sessions: smtp-sink listens on backend_port_, the counter
    // on port_.
    std::uint16_t backend_port_ = 0;
    std::unique_ptr<SessionCounter> counter_;
};

} // namespace compat
