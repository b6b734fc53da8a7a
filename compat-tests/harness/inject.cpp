#include "inject.hpp"

#include "error.hpp"
#include "fsutil.hpp"
#include "process.hpp"
#include "signals.hpp"
#include "smtp_client.hpp"

#include <iostream>
#include <thread>

namespace compat {
namespace {

const char* const kSmtpSource = "/usr/sbin/smtp-source";
const char* const kSendmail = "/usr/sbin/sendmail";

// Expands every string of a list.
std::vector<std::string> expand_all(const std::vector<std::string>& in, const Vars& vars,
                                    const std::string& ctx) {
    std::vector<std::string> out;
    for (const auto& s : in)
        out.push_back(vars.expand(s, ctx));
    return out;
}

} // namespace

// Headers, a blank line and the body; a sequence header tells repeats apart.
std::string build_message(const InjectSpec& spec, const std::vector<std::string>& to, int seq) {
    std::string m;
    m += "From: <" + spec.from + ">\n";
    m += "To: ";
    for (size_t i = 0; i < to.size(); ++i)
        m += (i ? ", <" : "<") + to[i] + ">";
    m += "\n";
    m += "Subject: " + spec.subject.value_or("compat test") + "\n";
    m += "X-Compat-Seq: " + std::to_string(seq) + "\n";
    for (const auto& h : spec.headers)
        m += h + "\n";
    m += "\n";
    m += spec.body;
    if (!spec.body.empty() && spec.body.back() != '\n') m += "\n";
    return m;
}

// -s sessions, -m messages, -r recipients, optional -l size and -S subject,
// then the extra arguments and the server address.
SpawnOptions smtp_source_options(const InjectSpec& spec, const std::string& from,
                                 const std::string& to, const std::vector<std::string>& args,
                                 std::uint16_t smtpd_port, const std::string& log) {
    SpawnOptions o;
    o.argv = {kSmtpSource,
              "-s",
              std::to_string(spec.sessions),
              "-m",
              std::to_string(spec.messages),
              "-r",
              std::to_string(spec.recipients),
              "-f",
              from,
              "-t",
              to};
    if (spec.size) {
        o.argv.push_back("-l");
        o.argv.push_back(std::to_string(*spec.size));
    }
    if (spec.subject) {
        o.argv.push_back("-S");
        o.argv.push_back(*spec.subject);
    }
    for (const auto& a : args)
        o.argv.push_back(a);
    o.argv.push_back("127.0.0.1:" + std::to_string(smtpd_port));
    o.output_path = log;
    return o;
}

// Dispatches on the method.
void run_injection(const InjectSpec& spec, std::size_t index, const Vars& vars,
                   const Instance& inst, std::uint16_t smtpd_port,
                   std::chrono::steady_clock::time_point deadline, bool verbose) {
    std::string ctx = "inject[" + std::to_string(index) + "]";
    if (spec.delay_before > 0) interruptible_sleep(spec.delay_before);
    std::string from = vars.expand(spec.from, ctx + ".from");
    std::vector<std::string> to = expand_all(spec.to, vars, ctx + ".to");
    std::vector<std::string> args = expand_all(spec.args, vars, ctx + ".args");
    std::string log = inst.dir() + "/inject-" + std::to_string(index) + ".log";

    if (spec.method == "smtp-source") {
        InjectSpec expanded = spec;
        if (spec.subject) expanded.subject = vars.expand(*spec.subject, ctx + ".subject");
        SpawnOptions o = smtp_source_options(expanded, from, to.at(0), args, smtpd_port, log);
        if (verbose) std::cout << "  " << ctx << ": " << join_command(o.argv) << "\n" << std::flush;
        run_command(o, time_left(deadline));
        return;
    }

    InjectSpec expanded = spec;
    expanded.from = from;
    if (spec.subject) expanded.subject = vars.expand(*spec.subject, ctx + ".subject");
    expanded.body = vars.expand(spec.body, ctx + ".body");
    expanded.headers = expand_all(spec.headers, vars, ctx + ".headers");

    if (spec.method == "smtp") {
        if (verbose)
            std::cout << "  " << ctx << ": SMTP to 127.0.0.1:" << smtpd_port << ", " << spec.count
                      << " message(s) x " << to.size() << " recipient(s)\n"
                      << std::flush;
        auto io = std::chrono::duration_cast<std::chrono::seconds>(time_left(deadline));
        SmtpClient c(smtpd_port, std::max(io, std::chrono::seconds(1)));
        c.ehlo("client.example");
        for (int i = 1; i <= spec.count; ++i) {
            check_interrupted();
            c.send_mail(from, to, build_message(expanded, to, i),
                        vars.expand(spec.mail_params, ctx + ".mail_params"),
                        vars.expand(spec.rcpt_params, ctx + ".rcpt_params"));
        }
        c.quit();
        return;
    }

    // sendmail: the message goes through postdrop into maildrop, then pickup.
    for (int i = 1; i <= spec.count; ++i) {
        std::string eml =
            inst.dir() + "/inject-" + std::to_string(index) + "-" + std::to_string(i) + ".eml";
        write_file(eml, build_message(expanded, to, i));
        SpawnOptions o;
        o.argv = {kSendmail, "-C", inst.conf_dir(), "-f", from};
        for (const auto& a : args)
            o.argv.push_back(a);
        o.argv.push_back("--");
        for (const auto& r : to)
            o.argv.push_back(r);
        o.stdin_path = eml;
        o.output_path = log;
        if (verbose && i == 1)
            std::cout << "  " << ctx << ": " << join_command(o.argv) << " < " << eml << "\n"
                      << std::flush;
        run_command(o, time_left(deadline));
    }
}

} // namespace compat
