#include "cqmgr/state/control_record.hpp"

#include <climits>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace cqmgr::state {

namespace {

using json = nlohmann::json;

constexpr int format_version = 1;

// The target's fields: a bare destination has no "transport", a whole
// transport no "destination".
json target_json(const ControlSetting& s) {
    json j = json::object();
    if (!s.transport.empty()) j["transport"] = s.transport;
    if (!s.destination.empty()) j["destination"] = s.destination;
    return j;
}

json until_json(int64_t until) {
    return until == 0 ? json(nullptr) : json(until);
}

// Reads one setting's target; throws when it names nothing.
void read_target(const json& j, ControlSetting& s) {
    if (j.contains("transport")) s.transport = j.at("transport").get<std::string>();
    if (j.contains("destination")) s.destination = j.at("destination").get<std::string>();
    if (s.transport.empty() && s.destination.empty())
        throw std::invalid_argument("record without target");
}

// An integer field (not a float, which would be cast out of range).
int64_t integer(const json& j, const char* key) {
    const json& v = j.at(key);
    if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX})
        throw std::invalid_argument(std::string("bad ") + key);
    if (!v.is_number_integer()) throw std::invalid_argument(std::string("bad ") + key);
    return v.get<int64_t>();
}

int64_t until_of(const json& j) {
    if (j.at("until").is_null()) return 0;
    int64_t v = integer(j, "until");
    if (v <= 0) throw std::invalid_argument("bad until");
    return v;
}

// "since", absent in documents of earlier versions (0).
int64_t since_of(const json& j) {
    if (!j.contains("since")) return 0;
    int64_t v = integer(j, "since");
    if (v < 0) throw std::invalid_argument("bad since");
    return v;
}

} // namespace

std::string encode_control_settings(const std::vector<ControlSetting>& settings) {
    json suspend = json::array(), throttle = json::array(), rule = json::array();
    for (const ControlSetting& s : settings) {
        json j = target_json(s);
        if (s.kind == ControlSetting::Kind::rule) {
            j["action"] = s.action;
            j["rule"] = s.rule;
            j["reason"] = s.reason;
            j["since"] = s.since;
            j["until"] = until_json(s.until);
            j["deliveries"] = s.deliveries > 0 ? json(s.deliveries) : json(nullptr);
            if (!s.sender.empty()) j["sender"] = s.sender;
            rule.push_back(std::move(j));
        } else if (s.kind == ControlSetting::Kind::suspend) {
            j["until"] = until_json(s.until);
            j["reason"] = s.reason;
            j["uid"] = s.uid;
            if (s.since > 0) j["since"] = s.since;
            suspend.push_back(std::move(j));
        } else {
            j["concurrency"] = s.concurrency;
            j["until"] = until_json(s.until);
            j["uid"] = s.uid;
            if (s.since > 0) j["since"] = s.since;
            throttle.push_back(std::move(j));
        }
    }
    json doc{{"version", format_version}, {"suspend", suspend}, {"throttle", throttle}};
    if (!rule.empty()) doc["rule"] = std::move(rule);
    // Text that is not UTF-8 (a reason is the client's bytes) is replaced
    // rather than refused: the setting is kept, its reason made readable.
    return doc.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string SettingsError::message() const {
    if (kind == Kind::too_long)
        return "longer than " + std::to_string(max_control_bytes) + " bytes";
    return detail;
}

Result<std::vector<ControlSetting>, SettingsError> decode_control_settings(std::string_view text) {
    if (text.size() > max_control_bytes)
        return Failure{SettingsError{SettingsError::Kind::too_long, {}}};
    std::vector<ControlSetting> out;
    try {
        json doc = json::parse(text);
        if (integer(doc, "version") != format_version)
            throw std::invalid_argument("unknown version");
        for (const json& j : doc.at("suspend")) {
            ControlSetting s;
            read_target(j, s);
            s.until = until_of(j);
            s.reason = j.at("reason").get<std::string>();
            s.uid = integer(j, "uid");
            s.since = since_of(j);
            out.push_back(std::move(s));
        }
        for (const json& j : doc.at("throttle")) {
            ControlSetting s;
            s.kind = ControlSetting::Kind::throttle;
            read_target(j, s);
            if (s.destination.empty()) throw std::invalid_argument("throttle without destination");
            int64_t concurrency = integer(j, "concurrency");
            if (concurrency < 1 || concurrency > INT_MAX)
                throw std::invalid_argument("bad concurrency");
            s.concurrency = static_cast<int>(concurrency);
            s.until = until_of(j);
            s.uid = integer(j, "uid");
            s.since = since_of(j);
            out.push_back(std::move(s));
        }
        if (doc.contains("rule"))
            for (const json& j : doc.at("rule")) {
                ControlSetting s;
                s.kind = ControlSetting::Kind::rule;
                read_target(j, s);
                if (s.transport.empty()) throw std::invalid_argument("rule without transport");
                s.action = j.at("action").get<std::string>();
                s.rule = j.at("rule").get<std::string>();
                s.reason = j.at("reason").get<std::string>();
                s.since = integer(j, "since");
                s.until = until_of(j);
                if (!j.at("deliveries").is_null()) {
                    s.deliveries = integer(j, "deliveries");
                    if (s.deliveries < 1) throw std::invalid_argument("bad deliveries");
                }
                if (j.contains("sender")) {
                    s.sender = j.at("sender").get<std::string>();
                    if (s.sender.empty() || s.destination.empty())
                        throw std::invalid_argument("bad sender rule");
                }
                out.push_back(std::move(s));
            }
    } catch (const std::exception& e) {
        // nlohmann's exceptions and ours alike.
        return Failure{SettingsError{SettingsError::Kind::malformed, e.what()}};
    }
    return out;
}

} // namespace cqmgr::state
