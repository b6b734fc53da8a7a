// smtp-sink processes that stand in for remote SMTP servers.
#pragma once

#include "fsutil.hpp"
#include "process.hpp"
#include "scenario.hpp"

#include <cstdint>
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

    // Starts smtp-sink (args already expanded) and waits until it listens.
    void start(const std::vector<std::string>& expanded_args);
    // Terminates the process by pid; safe to call twice.
    void stop() noexcept;

    const std::string& name() const { return spec_.name; }
    std::uint16_t port() const { return port_; }
    const std::string& log_path() const { return log_path_; }

  private:
    SinkSpec spec_;
    std::uint16_t port_;
    std::string log_path_;
    std::string dump_dir_;
    UserIds user_;
    Process proc_;
};

} // namespace compat
