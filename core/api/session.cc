#include "core/api/session.h"

#include <nlohmann/json.hpp>

#include "core/api/session_impl.h"
#include "core/spec/resource_catalog.h"

namespace servesim {

const char* servesim_version() { return "0.1.0"; }

Session::Session(std::unique_ptr<SessionImpl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

std::unique_ptr<Session> Session::create(const std::string& scenario_json, const ResourceLoader& loader,
                                         Errors& errors, const SessionOptions& options) {
  auto impl = std::make_unique<SessionImpl>(loader, options);
  if (!impl->build(scenario_json, errors)) return nullptr;
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

Progress Session::step(std::uint64_t max_events) { return impl_->step(max_events); }
void Session::cancel() { impl_->cancel(); }
Progress Session::progress() const { return impl_->progress(); }
std::string Session::result_json() const { return impl_->result_json(); }
std::string Session::summary_json() const { return impl_->summary_json(); }
std::string Session::chrome_trace_json() const { return impl_->chrome_trace_json(); }
std::string Session::benchmark_block() const { return impl_->benchmark_block(); }

namespace {
// Messages quote user input (a parse error's last token, a name cut at 40 bytes) that may be invalid UTF-8;
// dump() would throw on it, so such bytes become U+FFFD instead.
std::string dump_lenient(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}
}  // namespace

std::string errors_to_json(const Errors& errors) {
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const auto& e : errors.list()) arr.push_back({{"path", e.path}, {"message", e.message}});
  return dump_lenient(arr);
}

std::string validate_scenario_json(const std::string& scenario_json, const ResourceLoader& loader) {
  Errors errors;
  // Building a session also checks memory fit and workload data, beyond the schema.
  auto session = Session::create(scenario_json, loader, errors);
  nlohmann::ordered_json j;
  j["ok"] = errors.ok();
  j["errors"] = nlohmann::ordered_json::parse(errors_to_json(errors));
  return dump_lenient(j);
}

}  // namespace servesim
