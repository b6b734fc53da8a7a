#include "mail_params.hpp"

#include "cqmgr/conf/compat_level.hpp"
#include "cqmgr/conf/logical_lines.hpp"
#include "cqmgr/conf/values.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <grp.h>
#include <pwd.h>
#include <strings.h>
#include <sys/stat.h>

namespace cqmgr::conf {

namespace {

// The syslog facility names Postfix accepts on Linux.
bool known_facility(const std::string& name) {
    static const std::array<std::string_view, 20> names = {
        "auth",   "authpriv", "cron",   "daemon", "ftp",    "kern",   "lpr",
        "mail",   "news",     "syslog", "user",   "uucp",   "local0", "local1",
        "local2", "local3",   "local4", "local5", "local6", "local7"};
    return std::find(names.begin(), names.end(), name) != names.end();
}

// mail_owner, default_privs and setgid_group must exist, be unprivileged,
// and not share IDs (Postfix checks this in every daemon).
void check_accounts(const TableReader& r) {
    auto user = [&](const char* param) {
        const std::string& name = r.s(param);
        passwd* pw = ::getpwnam(name.c_str());
        if (!pw)
            r.fatal_main_cf(param, std::string("parameter ") + param +
                                       ": unknown user name value: " + name);
        if (pw->pw_uid == 0)
            r.fatal_main_cf(param, std::string("parameter ") + param + ": user " + name +
                                       " has privileged user ID");
        if (pw->pw_gid == 0)
            r.fatal_main_cf(param, std::string("parameter ") + param + ": user " + name +
                                       " has privileged group ID");
        return std::pair<uid_t, gid_t>(pw->pw_uid, pw->pw_gid);
    };
    auto [default_uid, default_gid] = user("default_privs");
    auto [owner_uid, owner_gid] = user("mail_owner");
    if (passwd* pw = ::getpwuid(owner_uid); pw && r.s("mail_owner") != pw->pw_name)
        r.fatal_main_cf("mail_owner", "parameter mail_owner: user " + r.s("mail_owner") +
                                          " has same user ID as " + pw->pw_name);
    const std::string& group = r.s("setgid_group");
    struct group* gr = ::getgrnam(group.c_str());
    if (!gr)
        r.fatal_main_cf("setgid_group", "parameter setgid_group: unknown group name: " + group);
    gid_t sgid = gr->gr_gid;
    if (sgid == 0)
        r.fatal_main_cf("setgid_group",
                        "parameter setgid_group: group " + group + " has privileged group ID");
    if (struct group* g2 = ::getgrgid(sgid); g2 && group != g2->gr_name)
        r.fatal_main_cf("setgid_group", "parameter setgid_group: group " + group +
                                            " has same group ID as " + g2->gr_name);
    const std::string& dp = r.s("default_privs");
    const std::string& mo = r.s("mail_owner");
    if (dp == mo)
        r.fatal_main_cf("default_privs",
                        "parameters default_privs and mail_owner specify the same user " + dp);
    if (default_uid == owner_uid)
        r.fatal_main_cf("default_privs",
                        "parameters default_privs and mail_owner: users " + dp + " and " + mo +
                            " have the same user ID: " + std::to_string(owner_uid));
    if (default_gid == owner_gid)
        r.fatal_main_cf("default_privs",
                        "parameters default_privs and mail_owner: users " + dp + " and " + mo +
                            " have the same group ID: " + std::to_string(owner_gid));
    if (default_gid == sgid)
        r.fatal_main_cf("default_privs", "parameters default_privs and setgid_group: user " + dp +
                                             " and group " + group +
                                             " have the same group ID: " + std::to_string(sgid));
    if (owner_gid == sgid)
        r.fatal_main_cf("mail_owner", "parameters mail_owner and setgid_group: user " + mo +
                                          " and group " + group +
                                          " have the same group ID: " + std::to_string(sgid));
}

// Reads the first line of the file a myorigin value names, with white space
// trimmed, refusing what Postfix's safe_open() refuses; throws ConfigError.
std::string read_myorigin_file(const std::string& path, const std::string& where) {
    auto fail = [&](const std::string& why) -> std::string {
        throw ConfigError(where, path + ": " + why);
    };
    std::ifstream in(path);
    if (!in) fail(std::string("cannot open file: ") + std::strerror(errno));
    struct stat st {
    }, lst{};
    if (::stat(path.c_str(), &st) < 0)
        fail(std::string("cannot open file: ") + std::strerror(errno));
    if (st.st_nlink != 1) fail("file has " + std::to_string(st.st_nlink) + " hard links");
    if (S_ISDIR(st.st_mode)) fail("file is a directory");
    if (::lstat(path.c_str(), &lst) < 0)
        fail(std::string("file status changed unexpectedly: ") + std::strerror(errno));
    if (S_ISLNK(lst.st_mode)) {
        // Only a root-owned link in a root-owned directory that only root
        // may write is followed.
        std::string parent = path.substr(0, path.rfind('/'));
        if (parent.empty()) parent = "/";
        struct stat pst {};
        bool ok = lst.st_uid == 0 && ::stat(parent.c_str(), &pst) == 0 && pst.st_uid == 0 &&
                  (pst.st_mode & (S_IWGRP | S_IWOTH)) == 0;
        if (!ok) fail("file is a symbolic link");
    }
    std::string line;
    std::getline(in, line);
    size_t b = 0, e = line.size();
    while (b < e && is_postfix_space(line[b]))
        ++b;
    while (e > b && is_postfix_space(line[e - 1]))
        --e;
    return line.substr(b, e - b);
}

// Case-insensitive equality (myhostname versus relayhost).
bool same_nocase(const std::string& a, const std::string& b) {
    return a.size() == b.size() && ::strcasecmp(a.c_str(), b.c_str()) == 0;
}

} // namespace

void read_mail_params(TableReader& r, const MainCf& cf, QmgrParams& q,
                      const QmgrParams::Options& options) {
    auto G = global_params();
    r.read(G, "config_directory", "compatibility_level");
    if (!parse_compat_level(r.s("compatibility_level")))
        throw ConfigError(cf.where("compatibility_level"),
                          "malformed compatibility level syntax: \"" + r.s("compatibility_level") +
                              "\"");
    r.read(G, "mail_version", "known_tcp_ports");
    if (!known_facility(r.s("syslog_facility")))
        r.fatal_main_cf("syslog_facility",
                        "parameter syslog_facility: unrecognized value: " + r.s("syslog_facility"));
    r.read(G, "daemon_table_open_error_is_fatal", "respectful_logging");
    r.read(G, "myhostname", "mydomain");
    for (const char* n : {"myhostname", "mydomain"})
        if (auto why = hostname_problem(r.s(n)))
            r.fatal_main_cf(n, std::string("parameter ") + n + ": bad parameter value: " + r.s(n),
                            *why);
    r.read(G, "mail_name", "info_log_address_format");
    if (options.myorigin_from_file && r.s("myorigin").starts_with('/')) {
        std::string path = r.s("myorigin");
        std::string origin = read_myorigin_file(path, cf.where("myorigin"));
        if (origin.empty())
            throw ConfigError(cf.where("myorigin"), "myorigin file " + path + " is empty");
        q.values["myorigin"] = origin;
    }
    r.read(G, "default_process_limit", "in_flow_delay");
    if (options.check_accounts) check_accounts(r);
    r.read(G, "mynetworks", "mynetworks");
    if (same_nocase(r.s("myhostname"), r.s("relayhost")))
        throw ConfigError(cf.where("relayhost"),
                          "myhostname and relayhost parameter settings must not be identical: " +
                              r.s("myhostname"));
    if (r.s("myorigin").find_first_of(", \t\r\n") != std::string::npos)
        throw ConfigError(cf.where("myorigin"),
                          "myorigin parameter setting must not contain multiple values: " +
                              r.s("myorigin"));
    const std::string& d = r.s("default_verp_delimiters");
    const std::string& f = r.s("verp_delimiter_filter");
    const char* why = d.size() != 2                       ? "bad VERP delimiter character count"
                      : f.find(d[0]) == std::string::npos ? "bad first VERP delimiter character"
                      : f.find(d[1]) == std::string::npos ? "bad second VERP delimiter character"
                                                          : nullptr;
    if (why)
        r.fatal_main_cf(
            "default_verp_delimiters",
            std::string("parameters default_verp_delimiters and verp_delimiter_filter: ") + why);
}

} // namespace cqmgr::conf
