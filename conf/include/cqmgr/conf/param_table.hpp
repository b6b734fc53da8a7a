// Every main.cf parameter the Postfix 3.7 queue manager reads, with its
// 3.7.11 default (as `postconf -d` prints it for the Debian build), its type
// and its bounds, in the order a stock qmgr(8) reads them:
//   global_params(): what every daemon reads at start-up (mail_params_init),
//   qmgr_params():   qmgr's own tables (int, str, bool, time),
//   transport_suffixes(): the 16 per-transport overrides qmgr reads the first
//                    time it sees a transport, and their default_* fallback.
// Bounds follow Postfix: 0 means "no bound", so e.g. a negative
// default_destination_concurrency_limit is accepted, as in Postfix.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace cqmgr::conf {

class MainCf;

enum class ParamType {
    String, // length bounds in min/max
    Int,    // 32-bit
    Long,   // sizes
    Bool,   // yes/no
    Time,   // seconds; the default's letter is the unit of a bare number
};

enum class ParamReader {
    AllDaemons, // global, read by every daemon (mail_params_init)
    Qmgr,       // qmgr's own tables
    Master,     // listed for reference; master(8) reads it, qmgr does not
};

struct ParamSpec {
    std::string_view name;
    ParamType type;
    std::string_view def; // raw default; empty with `computed` for host-dependent ones
    int64_t min = 0;
    int64_t max = 0;
    ParamReader reader = ParamReader::AllDaemons;
    bool computed = false;  // default computed at run time (myhostname, mydomain, mynetworks)
    bool qmgr_uses = false; // its value changes what qmgr does (docs/postfix-facts.md §9.2)
    std::string_view note;  // what qmgr uses it for
};

struct TransportSuffix {
    std::string_view suffix;   // e.g. "_destination_concurrency_limit"
    std::string_view fallback; // the global parameter used when unset
    ParamType type;            // Int, Time, or String (feedback)
    int64_t min = 0;
    int64_t max = 0;
};

// mail_params_init's parameters, in reading order (plus service_throttle_time).
std::span<const ParamSpec> global_params();
// qmgr's own parameters, in reading order.
std::span<const ParamSpec> qmgr_params();
// The per-transport suffixes, in the order qmgr reads them.
std::span<const TransportSuffix> transport_suffixes();
// The spec of a global or qmgr parameter, or nullptr.
const ParamSpec* find_param(std::string_view name);

// The host name as Postfix's get_hostname() gets it (gethostname()).
std::string system_hostname();

// Registers every default above in `cf`, including the computed myhostname
// (`hostname`, plus "." and $mydomain or "localdomain" when it has no dot)
// and mydomain (what follows the first dot of $myhostname, else
// "localdomain").  mynetworks stays unset unless main.cf sets it.  With
// `only_missing`, names that already have a value or default are left alone.
void register_defaults(MainCf& cf, const std::string& hostname = system_hostname(),
                       bool only_missing = false);

// Registers `<transport><suffix>` defaults of "$<fallback>" for one
// transport, as postconf does for master.cf services (local's own
// concurrency 2 and recipient limit 1 are kept).  Daemons do not need this;
// it makes str("<transport>_...") answer like `postconf -x`.
void register_transport_defaults(MainCf& cf, const std::string& transport);

} // namespace cqmgr::conf
