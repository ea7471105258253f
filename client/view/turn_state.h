// TurnState: what the session view knows of the attached session (id, directory, model,
// clients, tokens) and of the turns it follows: which turn ends a one-shot run, how many
// turns this client still waits for, which echoed prompts the daemon has not yet sent back,
// which approval this client answered. Plain data changed by the view's event handling and
// by the slash commands; not thread-safe (the view's loop thread only).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "client/view/renderer.h"

namespace agent::client {

struct TurnState {
  std::string session_id;
  std::string workdir;
  std::string cwd;  // where the session was started (Session.cwd); "": workdir
  std::string model;
  std::string mode;     // the session's policy mode, as PolicyModeName says it
  std::string sandbox;  // how its commands are confined (Session.sandbox)
  std::vector<std::string> clients;
  int64_t prompt_tokens = -1;  // of the last request; -1: none yet
  int64_t completion_tokens = 0;

  // One-shot: our prompt, whether its turn has started, and the turns running or queued
  // before ours when we attached (their TurnEnded are not ours).
  std::string own_prompt;
  bool own_turn_started = false;
  int turns_to_skip = 0;

  // Interactive: turns asked for by this client that have not ended yet.
  int turns_waiting = 0;
  // Prompts this client sent and echoed, not yet seen back as UserMessage.
  struct Echoed {
    std::string text;
    bool queued;  // sent while a turn ran: said again, dimmed, when its turn starts
  };
  std::deque<Echoed> echoed;
  std::string answered_call;  // the approval we answered (its Resolved is on the way)
  // The prompt of the turn shown running (the last UserMessage); what a daemon's restart cut
  // short, told once the session is back.
  std::string running_prompt;
  // The last tool result shown here, whole, for /last.
  std::string last_tool;
  std::string last_output;
  struct CutShort {
    std::string turn;      // its prompt; empty: no turn ran
    std::string question;  // the approval or question that was waiting; empty: none
  };
  std::optional<CutShort> cut_short;

  // Another session on the screen (/clear, /fork): the old one's prompts and turns are not
  // waited for any more.
  void SwitchedTo(const std::string& id) {
    session_id = id;
    echoed.clear();
    turns_waiting = 0;
  }
  // True when a TurnEnded in a one-shot run ends our own turn (else one before it ended).
  bool OwnTurnEnds() {
    if (own_turn_started || turns_to_skip <= 0) return true;
    --turns_to_skip;
    return false;
  }
  StatusInfo Status(const std::string& own_client, bool read_only) const {
    return StatusInfo{session_id, model, prompt_tokens, completion_tokens, clients, own_client,
                      read_only,  mode,  sandbox};
  }
};

}  // namespace agent::client
