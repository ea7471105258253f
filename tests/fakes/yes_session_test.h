// A test fixture: one Session in a fresh temporary project, in --yes mode, whose model is a
// FakeScript (tests add replies to `script_`). For tests of what a whole turn does.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "daemon/session/opening.h"
#include "daemon/session/session.h"
#include "gtest/gtest.h"
#include "tests/fakes/fake_model_client.h"

namespace agent::testing {

class YesSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/yes-session-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    workdir_ = std::filesystem::canonical(tmpl).string();
    registry_ = daemon::tools::ToolRegistry::CreateCore();
    script_ = std::make_shared<FakeScript>();
    daemon::SessionDeps d;
    d.epoch = "e";
    d.tools = &registry_;
    d.make_model_client = [script = script_] { return std::make_unique<FakeModelClient>(script); };
    d.config.max_steps = 5;
    daemon::SessionSettings s;
    s.model.model = "fake";
    s.policy = agent::v1::POLICY_MODE_YES;
    auto created = daemon::CreateSession(workdir_, s, "", std::move(d));
    ASSERT_TRUE(created.ok()) << created.status();
    session_ = *created;
  }
  void TearDown() override {
    session_.reset();
    std::filesystem::remove_all(workdir_);
  }

  std::string workdir_;
  daemon::tools::ToolRegistry registry_;
  std::shared_ptr<FakeScript> script_;
  std::shared_ptr<daemon::Session> session_;
};

}  // namespace agent::testing
