// The one table of the parameters the queue manager reads: each is declared
// once, with its type, default, bounds and the QmgrParams member it fills.
// Stock's rows carry the Postfix 3.7.11 default (as `postconf -d` prints it
// for the Debian build), in the order a stock qmgr(8) reads them:
//   global_params(): what every daemon reads at start-up (mail_params_init),
//   qmgr_params():   qmgr's own tables (int, str, bool, time),
//   transport_suffixes(): the 16 per-transport overrides qmgr reads the first
//                    time it sees a transport, and their default_* fallback.
// cqmgr's own parameters follow them (cqmgr_params(), and their overrides in
// cqmgr_transport_suffixes()); Postfix and postconf do not know them.
// Bounds follow Postfix: 0 means "no bound", so e.g. a negative
// default_destination_concurrency_limit is accepted, as in Postfix.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::conf {

class MainCf;
struct Feedback;
struct QmgrParams;
struct TransportParams;

enum class ParamType {
    String,  // length bounds in min/max
    Int,     // 32-bit
    Long,    // sizes
    Bool,    // yes/no
    Time,    // seconds; the default's letter is the unit of a bare number
    Percent, // "N" or "N%", 0 to 100 (cqmgr's own)
};

enum class ParamReader {
    AllDaemons, // global, read by every daemon (mail_params_init)
    Qmgr,       // qmgr's own tables
    Master,     // listed for reference; master(8) reads it, qmgr does not
    Cqmgr,      // cqmgr's own: its integers are never negative (a minimum of
                // 0 is a bound for them, not "no bound")
};

// The QmgrParams member a parameter fills (kind None: the value is only in
// QmgrParams::values).  String values fill a string, or a list split into
// words (commas and white space) or into tables (the same, except inside
// {...}: inline:{ a=1, b=2 } is one item).
struct ParamField {
    enum class Kind { None, Number, Flag, Text, Words, Tables };
    Kind kind = Kind::None;
    int64_t QmgrParams::*number = nullptr;
    bool QmgrParams::*flag = nullptr;
    std::string QmgrParams::*text = nullptr;
    std::vector<std::string> QmgrParams::*list = nullptr;
};

// A check of a string value beyond its length (throws ConfigError).
using ParamCheck = void (*)(const MainCf& cf, const std::string& name, const std::string& value);

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
    ParamField field{};
    ParamCheck check = nullptr;
};

// The TransportParams member a per-transport value fills: a number, a
// string (with a feedback: the name of the parameter it came from), or a
// feedback.
struct TransportField {
    int64_t TransportParams::*number = nullptr;
    std::string TransportParams::*text = nullptr;
    Feedback TransportParams::*feedback = nullptr;
};

// `<transport><suffix>`: type and bounds are its global's.
struct TransportSuffix {
    std::string_view suffix;   // e.g. "_destination_concurrency_limit"
    std::string_view fallback; // the global parameter used when unset
    ParamType type;            // Int, Time, Percent, or String (feedback, policy)
    int64_t min = 0;
    int64_t max = 0;
    const ParamSpec* global = nullptr; // the fallback's row
    const ParamSpec* local = nullptr;  // the `local` transport's own fallback, if any
    TransportField field{};
};

// mail_params_init's parameters, in reading order (plus service_throttle_time).
std::span<const ParamSpec> global_params();
// qmgr's own parameters, in reading order.
std::span<const ParamSpec> qmgr_params();
// The per-transport suffixes, in the order qmgr reads them.
std::span<const TransportSuffix> transport_suffixes();
// cqmgr's own parameters, in reading order (after stock's).
std::span<const ParamSpec> cqmgr_params();
// cqmgr's per-transport overrides (<transport>_cqmgr_...), read after stock's.
std::span<const TransportSuffix> cqmgr_transport_suffixes();
// The spec of a global or qmgr parameter (Postfix's, not cqmgr's), or nullptr.
const ParamSpec* find_param(std::string_view name);

// The host name as Postfix's get_hostname() gets it (gethostname()).
std::string system_hostname();

// Registers every default of Postfix's parameters in `cf`, including the
// computed myhostname (`hostname`, plus "." and $mydomain or "localdomain"
// when it has no dot) and mydomain (what follows the first dot of
// $myhostname, else "localdomain").  mynetworks stays unset unless main.cf
// sets it.  cqmgr's own stay unregistered, as in postconf: $cqmgr_...
// expands to "" unless set.  With `only_missing`, names that already have a
// value or default are left alone.
void register_defaults(MainCf& cf, const std::string& hostname = system_hostname(),
                       bool only_missing = false);

// Registers `<transport><suffix>` defaults of "$<fallback>" for one
// transport, as postconf does for master.cf services (local's own
// concurrency 2 and recipient limit 1 are kept).  Daemons do not need this;
// it makes str("<transport>_...") answer like `postconf -x`.
void register_transport_defaults(MainCf& cf, const std::string& transport);

} // namespace cqmgr::conf
