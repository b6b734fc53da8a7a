#include "queue_template.hpp"

#include "clock.hpp"
#include "error.hpp"
#include "mail_setup.hpp"
#include "net.hpp"
#include "process.hpp"

#include <filesystem>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

namespace bench {
namespace {

// "incoming=20000 active=0" for messages.
std::string describe_counts(const compat::Instance& inst,
                            const std::map<std::string, std::uint64_t>& want) {
    std::string out;
    for (const auto& [q, n] : want)
        out += (out.empty() ? "" : " ") + q + "=" +
               std::to_string(compat::count_files(inst.queue_dir() + "/" + q)) + " (want " +
               std::to_string(n) + ")";
    return out;
}

// True once every directory in `want` holds exactly its count.
bool counts_reached(const compat::Instance& inst,
                    const std::map<std::string, std::uint64_t>& want) {
    for (const auto& [q, n] : want)
        if (compat::count_files(inst.queue_dir() + "/" + q) != n) return false;
    return true;
}

} // namespace

// A stock instance (qmgr on or off), one injection, a bounded wait for the counts.
QueueTemplate::QueueTemplate(const TemplateSpec& spec, bool verbose)
    : dir_(std::make_unique<compat::WorkDir>("/tmp/cqmgr-bench-template-")), queues_(spec.queues) {
    dir_->remove_on_exit(true);
    double t0 = boot_seconds();
    auto ports = compat::allocate_ports(2);
    compat::InstanceConfig cfg;
    cfg.qmgr = compat::QmgrKind::Stock;
    cfg.qmgr_enabled = spec.qmgr_enabled;
    cfg.smtpd_port = ports[0];
    cfg.main_cf = spec.main_cf(ports[1]);
    cfg.master_exit_after = spec.timeout + 60;
    compat::Instance inst(dir_->path());
    inst.create(cfg);
    inst.start();
    spec.inject(inst, ports[0]);
    double until = boot_seconds() + spec.timeout;
    while (!counts_reached(inst, spec.ready)) {
        if (boot_seconds() >= until)
            throw compat::Error("queue template " + spec.label + ": expected " +
                                "the queue to fill within " + std::to_string(spec.timeout) +
                                " s, found " + describe_counts(inst, spec.ready) +
                                "; maillog tail:\n" + inst.maillog_tail());
        if (!inst.master_alive())
            throw compat::Error("queue template " + spec.label +
                                ": expected master to keep running, found it gone");
        pause(0.2);
    }
    inst.stop();
    if (verbose)
        std::cout << "  queue template " << spec.label << " ready in " << dir_->path() << " ("
                  << static_cast<int>(boot_seconds() - t0) << " s)\n"
                  << std::flush;
}

// One copy_queue() per directory.
void QueueTemplate::copy_into(const compat::Instance& inst) const {
    for (const auto& q : queues_)
        copy_queue(inst, q, q);
}

// cp -a "SRC/." into the existing DST.
void QueueTemplate::copy_queue(const compat::Instance& inst, const std::string& from,
                               const std::string& to) const {
    compat::SpawnOptions o;
    o.argv = {"/bin/cp", "-a", dir_->path() + "/queue/" + from + "/.", inst.queue_dir() + "/" + to};
    o.output_path = inst.dir() + "/copy-" + to + ".log";
    compat::run_command(o, std::chrono::minutes(10));
}

std::string QueueTemplate::queue_dir() const {
    return dir_->path() + "/queue";
}

// One copy_file per message, then its owner and mode.
std::vector<std::string> copy_incoming_to_deferred(const QueueTemplate& t,
                                                   const compat::Instance& inst) {
    namespace fs = std::filesystem;
    compat::UserIds postfix = compat::lookup_user("postfix");
    std::string to = inst.queue_dir() + "/deferred";
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(t.queue_dir() + "/incoming")) {
        if (!e.is_regular_file()) continue;
        std::string id = e.path().filename().string();
        std::string dir = to + "/" + id.substr(0, 1);
        if (!fs::exists(dir)) compat::make_dir(dir, 0700, postfix.uid, postfix.gid);
        std::string target = dir + "/" + id;
        fs::copy_file(e.path(), target);
        if (::chown(target.c_str(), postfix.uid, postfix.gid) != 0 ||
            ::chmod(target.c_str(), 0700) != 0)
            throw compat::Error("expected to set the owner and mode of " + target);
        out.push_back(std::move(target));
    }
    return out;
}

// Walks the tree and backdates each regular file.
void backdate_files(const std::string& dir, int seconds_ago) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
        if (e.is_regular_file()) compat::backdate(e.path().string(), seconds_ago);
}

// The template flush, intrinsic, restart-active and deferred-scale share;
// in_flow_delay = 0, because without a queue manager to hand out tokens
// cleanup would wait 1 s per message.
TemplateSpec incoming_template(const std::string& label, std::uint64_t messages) {
    TemplateSpec t;
    t.label = label;
    t.qmgr_enabled = false;
    t.main_cf = [](std::uint16_t) { return MainCf{{"in_flow_delay", "0"}}; };
    t.inject = smtp_source_injector(messages);
    t.ready = {{"incoming", messages}};
    t.queues = {"incoming"};
    t.timeout = 300 + static_cast<int>(messages / 20);
    return t;
}

// The template deferred-restart and outage-recovery share.
TemplateSpec deferred_template(const std::string& label, std::uint64_t messages) {
    TemplateSpec t;
    t.label = label;
    t.qmgr_enabled = true;
    t.main_cf = [](std::uint16_t dead) {
        MainCf cf = relay_to(dead);
        cf.emplace_back("in_flow_delay", "0");
        return cf;
    };
    t.inject = smtp_source_injector(messages);
    t.ready = {{"deferred", messages}, {"defer", messages}, {"incoming", 0}, {"active", 0}};
    t.queues = {"deferred", "defer"};
    t.timeout = 300 + static_cast<int>(messages / 20);
    return t;
}

// Backdated by a minute: due at once.
void copy_due(const QueueTemplate& t, const compat::Instance& inst) {
    t.copy_into(inst);
    backdate_files(inst.queue_dir() + "/deferred", 60);
}

} // namespace bench
