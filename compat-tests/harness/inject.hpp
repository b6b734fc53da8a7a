// Injection of test mail into the instance: smtp-source, the built-in SMTP
// client, or sendmail(1) (postdrop + pickup).
#pragma once

#include "instance.hpp"
#include "process.hpp"
#include "scenario.hpp"

#include <chrono>
#include <string>

namespace compat {

// Runs one [[inject]] step to completion before `deadline`; `index` names its
// log file (DIR/inject-INDEX.log). Throws on any failure.
void run_injection(const InjectSpec& spec, std::size_t index, const Vars& vars,
                   const Instance& inst, std::uint16_t smtpd_port,
                   std::chrono::steady_clock::time_point deadline, bool verbose);

// The smtp-source(1) command of an smtp-source step whose strings are already
// expanded: `to` is its -t recipient, `log` receives its output.
SpawnOptions smtp_source_options(const InjectSpec& spec, const std::string& from,
                                 const std::string& to, const std::vector<std::string>& args,
                                 std::uint16_t smtpd_port, const std::string& log);

// Builds the RFC 5322 text of an smtp/sendmail message (LF line ends).
std::string build_message(const InjectSpec& spec, const std::vector<std::string>& to, int seq);

} // namespace compat
