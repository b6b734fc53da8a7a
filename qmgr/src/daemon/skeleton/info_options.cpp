#include "info_options.hpp"

#include <cstdio>
#include <cstring>
#include <string>

namespace cqmgr::qmgr {

bool answer_info_option(const char* arg, std::string_view version) {
    if (std::strcmp(arg, "--version") == 0) {
        std::printf("cqmgr %s\n", std::string(version).c_str());
        return true;
    }
    if (std::strcmp(arg, "--help") == 0) {
        std::printf(
            "usage: cqmgr [-cdDlSuvVz] [-n service] [-o name=value] [-s count] [-t transport]\n"
            "       cqmgr check [-c config_dir]\n"
            "\n"
            "cqmgr is a queue manager for Postfix.  master(8) starts it from the qmgr line\n"
            "of master.cf, in place of qmgr(8):\n"
            "\n"
            "    qmgr      unix  n       -       n       300     1       cqmgr\n"
            "\n"
            "It reads main.cf from $MAIL_CONFIG (default /etc/postfix) and logs as\n"
            "postfix/qmgr.  It is not meant to be run by hand; see cqmgr(8).\n"
            "\n"
            "  check       report what in main.cf and master.cf would stop or hinder\n"
            "              cqmgr (exit status 1 on an error); -c names the\n"
            "              configuration directory\n"
            "  --version   print the version and exit\n"
            "  --help      print this text and exit\n");
        return true;
    }
    return false;
}

} // namespace cqmgr::qmgr
