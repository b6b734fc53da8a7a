#include "mail_setup.hpp"

#include "inject.hpp"

#include <algorithm>
#include <cmath>

namespace bench {

// Rounded, with a floor.
std::uint64_t scaled(double full, double scale, std::uint64_t minimum) {
    return std::max<std::uint64_t>(minimum, static_cast<std::uint64_t>(std::llround(full * scale)));
}

// Groups of three digits.
std::string with_commas(std::uint64_t n) {
    std::string s = std::to_string(n);
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3)
        s.insert(static_cast<size_t>(i), ",");
    return s;
}

// Backlog 1024: a hundred delivery agents may connect at once.
compat::SinkSpec sink_spec(const std::string& name, std::vector<std::string> args,
                           const std::string& host) {
    compat::SinkSpec s;
    s.name = name;
    s.host = host;
    s.args = std::move(args);
    s.backlog = 1024;
    return s;
}

std::string short_message(const std::string& from, const std::string& kind) {
    return "From: <" + from + ">\nTo: undisclosed-recipients:;\nSubject: " + kind + "\n\n" + kind +
           " benchmark message\n";
}

// One main.cf line.
MainCf relay_to(std::uint16_t port) {
    return {{"relayhost", "[127.0.0.1]:" + std::to_string(port)}};
}

// One main.cf line.
MainCf discard_everything() {
    return {{"default_transport", "discard"}};
}

// The harness's smtp-source command with the benchmark's message shape.
compat::SpawnOptions smtp_source(const compat::Instance& inst, std::uint16_t smtpd_port,
                                 std::uint64_t messages, int sessions, const std::string& to,
                                 const std::string& log_name) {
    compat::InjectSpec spec;
    spec.method = "smtp-source";
    spec.messages = static_cast<int>(messages);
    spec.sessions = sessions;
    spec.recipients = 1;
    spec.size = 1000;
    return compat::smtp_source_options(spec, spec.from, to, {}, smtpd_port,
                                       inst.dir() + "/" + log_name + ".log");
}

// run_command() with a generous bound; the template has its own timeout too.
std::function<void(const compat::Instance&, std::uint16_t)>
smtp_source_injector(std::uint64_t messages) {
    return [messages](const compat::Instance& inst, std::uint16_t port) {
        compat::run_command(smtp_source(inst, port, messages, 20, "bob@dest.example", "inject"),
                            std::chrono::minutes(30));
    };
}

} // namespace bench
