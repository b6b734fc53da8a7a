// The live suite's main(): checks that a live run is possible (root, an
// installed Postfix, smtp-sink), starts the private instance and the sinks,
// runs the tests, and tears everything down.  Exit status 77 means
// "skipped" to ctest.
#include "live_env.hpp"

#include "fsutil.hpp"
#include "instance.hpp"
#include "net.hpp"
#include "process.hpp"
#include "sink.hpp"
#include "smtp_client.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <gtest/gtest.h>
#include <iostream>
#include <memory>
#include <sstream>
#include <sys/stat.h>
#include <sys/time.h>
#include <thread>
#include <unistd.h>

namespace live {

namespace {
Env g_env;

// Runs a shell command, returns its stdout and exit status.
std::pair<std::string, int> capture(const std::string& cmd) {
    std::string out;
    FILE* f = ::popen(cmd.c_str(), "r");
    if (!f) throw std::runtime_error("popen " + cmd + ": " + std::strerror(errno));
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
        out.append(buf, n);
    int st = ::pclose(f);
    while (!out.empty() && out.back() == '\n')
        out.pop_back();
    return {out, st};
}

// Single-quotes `s` for /bin/sh.
std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) {
        if (c == '\'') q += "'\\''";
        else q += c;
    }
    return q + "'";
}

void write_text(const std::string& path, const std::string& text, mode_t mode = 0644) {
    compat::write_file(path, text, mode);
}
} // namespace

const Env& env() {
    return g_env;
}

std::string slurp(const std::string& path) {
    std::string s;
    compat::read_file_if_exists(path, s);
    return s;
}

bool exists(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
}

std::vector<std::string> incoming_ids() {
    std::vector<std::string> ids;
    DIR* d = ::opendir((g_env.queue_dir + "/incoming").c_str());
    if (!d) throw std::runtime_error("opendir incoming: " + std::string(std::strerror(errno)));
    while (struct dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n == "." || n == ".." || n.find('.') != std::string::npos) continue;
        struct stat st;
        // Only committed files (mode 0700).
        if (::stat((g_env.queue_dir + "/incoming/" + n).c_str(), &st) == 0 &&
            (st.st_mode & 0700) == 0700)
            ids.push_back(n);
    }
    ::closedir(d);
    std::sort(ids.begin(), ids.end());
    return ids;
}

std::vector<std::string> new_incoming(const std::vector<std::string>& before) {
    std::vector<std::string> now = incoming_ids(), out;
    std::set_difference(now.begin(), now.end(), before.begin(), before.end(),
                        std::back_inserter(out));
    return out;
}

std::string submit(const std::string& from, const std::vector<std::string>& to,
                   const std::string& subject, const std::string& body) {
    auto before = incoming_ids();
    compat::SmtpClient c(g_env.ports.smtpd, std::chrono::seconds(10));
    c.ehlo("client.example");
    std::string msg = "From: <" + from + ">\nTo: <" + to.front() + ">\nSubject: " + subject +
                      "\n\n" + body;
    c.send_mail(from, to, msg);
    c.quit();
    auto fresh = new_incoming(before);
    if (fresh.size() != 1)
        throw std::runtime_error("expected exactly one new file in incoming/ after submission, got " +
                                 std::to_string(fresh.size()));
    return fresh.front();
}

void activate(const std::string& id) {
    std::string from = g_env.queue_dir + "/incoming/" + id, to = g_env.queue_dir + "/active/" + id;
    if (::rename(from.c_str(), to.c_str()) != 0)
        throw std::runtime_error("rename " + from + " " + to + ": " + std::strerror(errno));
}

std::string submit_active(const std::string& from, const std::vector<std::string>& to,
                          const std::string& subject) {
    std::string id = submit(from, to, subject);
    activate(id);
    return id;
}

cqmgr::protocol::DeliveryRequest request_for(const std::string& id, const std::string& nexthop) {
    QueueFile q = read_queue_file(g_env.queue_dir + "/active/" + id);
    cqmgr::protocol::DeliveryRequest r;
    r.queue_id = id;
    r.data_offset = q.data_offset;
    r.data_size = q.cont_length;
    r.nexthop = nexthop;
    r.encoding = q.encoding;
    r.smtputf8 = q.smtputf8;
    r.sender = q.sender;
    r.envelope_id = q.envelope_id;
    r.rewrite_context = q.rewrite_context;
    r.stats.incoming_arrival = {q.arrival_sec, q.arrival_usec};
    struct timeval now;
    ::gettimeofday(&now, nullptr);
    r.stats.active_arrival = {now.tv_sec, now.tv_usec};
    for (const auto& rc : q.recipients)
        if (!rc.done)
            r.recipients.push_back({rc.orig_rcpt, rc.address, rc.offset, rc.dsn_orcpt, rc.notify_flags});
    return r;
}

std::string log_path(const std::string& queue, const std::string& id) {
    // hash_queue_names = deferred, defer; hash_queue_depth = 1.
    if (queue == "defer") return g_env.queue_dir + "/defer/" + id.substr(0, 1) + "/" + id;
    return g_env.queue_dir + "/" + queue + "/" + id;
}

std::optional<std::string> wait_for_log(const std::string& needle, std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
        std::string log = slurp(g_env.dir + "/maillog");
        auto at = log.find(needle);
        if (at != std::string::npos) {
            auto start = log.rfind('\n', at);
            auto end = log.find('\n', at);
            start = start == std::string::npos ? 0 : start + 1;
            return log.substr(start, end == std::string::npos ? std::string::npos : end - start);
        }
        if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

std::string postconf(const std::string& name) {
    auto [out, st] = capture("/usr/sbin/postconf -c " + shell_quote(g_env.conf_dir) + " -h " +
                             shell_quote(name) + " 2>/dev/null");
    if (st != 0) throw std::runtime_error("postconf -h " + name + " failed");
    return out;
}

std::string postconf_expanded(const std::string& name) {
    auto [out, st] = capture("/usr/sbin/postconf -c " + shell_quote(g_env.conf_dir) + " -x -h " +
                             shell_quote(name) + " 2>/dev/null");
    if (st != 0) throw std::runtime_error("postconf -x -h " + name + " failed");
    return out;
}

std::optional<std::string> postmap_query(const std::string& key, const std::string& table) {
    auto [out, st] = capture("/usr/sbin/postmap -c " + shell_quote(g_env.conf_dir) + " -q " +
                             shell_quote(key) + " " + shell_quote(table) + " 2>/dev/null");
    if (st != 0) return std::nullopt;
    return out;
}

} // namespace live

namespace {

// What the suite needs from the host; empty when everything is there.
std::string missing_prerequisite() {
    if (::geteuid() != 0) return "not running as root";
    for (const char* p : {"/usr/lib/postfix/sbin/master", "/usr/sbin/smtp-sink", "/usr/sbin/postconf",
                          "/usr/sbin/postmap"})
        if (::access(p, X_OK) != 0) return std::string(p) + " is not installed";
    return "";
}

struct Suite {
    std::unique_ptr<compat::WorkDir> dir;
    std::vector<std::unique_ptr<compat::Sink>> sinks;
    std::unique_ptr<compat::Instance> inst;

    void start() {
        using live::g_env;
        dir = std::make_unique<compat::WorkDir>("/tmp/cqmgr-proto-live-");
        g_env.dir = dir->path();
        g_env.queue_dir = g_env.dir + "/queue";
        g_env.conf_dir = g_env.dir + "/conf";
        auto ports = compat::allocate_ports(5);
        g_env.ports = {ports[0], ports[1], ports[2], ports[3], ports[4]};

        compat::UserIds postfix = compat::lookup_user("postfix");
        struct SinkDef {
            const char* name;
            std::vector<std::string> args;
            std::uint16_t port;
        };
        const SinkDef defs[] = {{"accept", {}, g_env.ports.sink},
                                {"slow", {"-w", "30"}, g_env.ports.slow},
                                {"reject", {"-f", "RCPT"}, g_env.ports.reject}};
        compat::make_dir(g_env.dir + "/sinks", 0755, 0, 0);
        for (const auto& d : defs) {
            compat::SinkSpec spec{d.name, d.args, 100};
            sinks.push_back(std::make_unique<compat::Sink>(
                spec, d.port, g_env.dir + "/sink-" + d.name + ".log",
                g_env.dir + "/sinks/" + d.name, postfix));
            sinks.back()->configure(d.args);
            sinks.back()->start();
        }

        // No queue manager: the qmgr service runs this stub, which holds
        // master's status channel until master goes away.
        std::string stub = g_env.dir + "/stub-qmgr";
        live::write_text(stub, "#!/bin/sh\n# stands in for qmgr: does nothing until master exits\n"
                               "exec cat <&5 >/dev/null\n", 0755);

        compat::InstanceConfig cfg;
        cfg.qmgr = compat::QmgrKind::Cqmgr;
        cfg.cqmgr_path = stub;
        cfg.smtpd_port = g_env.ports.smtpd;
        const std::string& c = g_env.conf_dir;
        cfg.main_cf = {
            {"virtual_alias_domains", "alias.example"},
            {"virtual_alias_maps", "texthash:" + c + "/virtual"},
            {"virtual_mailbox_domains", "vmail.example"},
            {"virtual_mailbox_maps", "texthash:" + c + "/vmailbox"},
            {"virtual_mailbox_base", g_env.dir + "/mail"},
            {"virtual_uid_maps", "static:65534"},
            {"virtual_gid_maps", "static:65534"},
            {"relay_domains", "relay.example"},
            {"transport_maps", "texthash:" + c + "/transport"},
            // Only probes (request=verify) see this table, which cannot be
            // opened: their lookups fail, which is how RESOLVE_FLAG_FAIL shows.
            {"address_verify_transport_maps", "texthash:" + c + "/missing-table"},
            {"fast_flush_domains", "relay.example, dest.example"},
            {"smtp_connect_timeout", "5s"},
            // A killed agent that never finished a request makes master
            // throttle its service; keep that short.
            {"service_throttle_time", "1s"},
            // Nobody hands out in-flow tokens here; without this cleanup
            // waits 1 s for one on every submission.
            {"in_flow_delay", "0"},
        };
        cfg.master_cf = {"slowsmtp   unix  - - n -  - smtp"};
        cfg.master_exit_after = 300;
        inst = std::make_unique<compat::Instance>(g_env.dir);
        inst->create(cfg);
        live::write_text(c + "/transport",
                         "override.example     smtp:[127.0.0.1]:" + std::to_string(g_env.ports.sink) + "\n"
                         "err.example          error:5.7.1 go away\n"
                         "retry.example        retry:4.3.2 try later\n"
                         "disc.example         discard:silently\n"
                         "hoponly.example      :[192.0.2.1]\n"
                         "someone@peruser.example relay:per.user.example\n");
        live::write_text(c + "/virtual", "known@alias.example nobody@test.example\n");
        live::write_text(c + "/vmailbox", "user@vmail.example vmail.example/user/\n");
        compat::backdate(c + "/transport", 60);
        compat::backdate(c + "/virtual", 60);
        compat::backdate(c + "/vmailbox", 60);
        inst->start();
        if (::chdir(g_env.queue_dir.c_str()) != 0)
            throw std::runtime_error("chdir " + g_env.queue_dir + ": " + std::strerror(errno));
    }

    void stop(bool passed) {
        if (::chdir("/") != 0) std::perror("chdir /");
        if (inst) inst->stop();
        for (auto& s : sinks)
            s->stop();
        if (dir) {
            dir->remove_on_exit(passed);
            if (!passed) std::cerr << "protocol_live_tests: instance left in " << dir->path() << "\n";
        }
    }
};

} // namespace

int main(int argc, char** argv) {
    testing::InitGoogleTest(&argc, argv);
    if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();
    std::string missing = missing_prerequisite();
    if (!missing.empty()) {
        std::cout << "protocol_live_tests: skipped: " << missing << "\n";
        return 77;
    }
    compat::become_child_subreaper();
    Suite suite;
    auto t0 = std::chrono::steady_clock::now();
    try {
        suite.start();
    } catch (const std::exception& e) {
        std::cerr << "protocol_live_tests: could not start the Postfix instance: " << e.what() << "\n";
        suite.stop(false);
        return 1;
    }
    std::cout << "protocol_live_tests: instance up in "
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()
              << " s at " << live::env().dir << "\n";
    int rc = RUN_ALL_TESTS();
    suite.stop(rc == 0);
    return rc;
}
