#include "cqmgr/conf/command_line.hpp"

#include <charconv>
#include <string_view>

namespace cqmgr::conf {

std::optional<CommandLine> parse_command_line(int argc, char** argv, std::string& error) {
    CommandLine cl;
    std::string_view argv0 = argc > 0 ? argv[0] : "cqmgr";
    auto slash = argv0.rfind('/');
    cl.process_name = std::string(slash == argv0.npos ? argv0 : argv0.substr(slash + 1));
    cl.service_name = cl.process_name;

    int i = 1;
    for (; i < argc; ++i) {
        std::string_view a = argv[i];
        if (a == "--") {
            ++i;
            break;
        }
        if (a.size() < 2 || a[0] != '-') break;
        // Options may be bundled (-lu) and values may be attached (-tunix).
        for (size_t k = 1; k < a.size(); ++k) {
            char opt = a[k];
            auto value = [&]() -> std::optional<std::string> {
                if (k + 1 < a.size()) {
                    std::string v(a.substr(k + 1));
                    k = a.size();
                    return v;
                }
                if (i + 1 < argc) {
                    k = a.size();
                    return std::string(argv[++i]);
                }
                error = std::string("option -") + opt + " requires a value";
                return std::nullopt;
            };
            switch (opt) {
            case 'l': cl.single_process = true; break;
            case 'u': cl.unprivileged = true; break;
            case 'c': cl.chroot = true; break;
            case 'd': cl.debug = true; break;
            case 'v': ++cl.verbose; break;
            case 'S': cl.stdin_mode = true; break;
            case 'z': break;
            case 'D': break;
            case 'V': break;
            case 'n': {
                auto v = value();
                if (!v) return std::nullopt;
                cl.service_name = *v;
                break;
            }
            case 't': {
                auto v = value();
                if (!v) return std::nullopt;
                cl.transport = *v;
                break;
            }
            case 'C': {
                auto v = value();
                if (!v) return std::nullopt;
                cl.config_dir = *v;
                break;
            }
            case 's': {
                auto v = value();
                if (!v) return std::nullopt;
                int n = 0;
                auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
                if (ec != std::errc() || p != v->data() + v->size() || n < 1) {
                    error = "invalid -s value: " + *v;
                    return std::nullopt;
                }
                cl.listen_fds = n;
                break;
            }
            case 'i':
            case 'm': {
                // max_idle and max_use: qmgr forces both to 0, so ignore them.
                if (!value()) return std::nullopt;
                break;
            }
            case 'o': {
                auto v = value();
                if (!v) return std::nullopt;
                auto eq = v->find('=');
                if (eq == std::string::npos || eq == 0) {
                    error = "bad -o argument \"" + *v + "\": expected name=value";
                    return std::nullopt;
                }
                cl.overrides.emplace_back(v->substr(0, eq), v->substr(eq + 1));
                break;
            }
            default:
                error = std::string("invalid option -- ") + opt;
                return std::nullopt;
            }
        }
    }
    if (i < argc) {
        error = std::string("unexpected command-line argument: ") + argv[i];
        return std::nullopt;
    }
    return cl;
}

} // namespace cqmgr::conf
