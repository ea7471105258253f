# bash completion for agent(1), the client of agentd.

# Session ids of this project: the first column of `agent ls`, under its header. Only a daemon
# that is already running is asked, so pressing Tab never starts one.
_agent_session_ids() {
  local agent=$1
  timeout 2 "$agent" daemon status >/dev/null 2>&1 || return 0
  timeout 2 "$agent" ls 2>/dev/null | tail -n +2 | while read -r id _; do printf '%s\n' "$id"; done
}

_agent() {
  local cur prev cword
  local -a words
  if declare -F _init_completion >/dev/null; then
    _init_completion -s || return  # -s: --resume=ID gives prev=--resume, cur=ID
  else
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
  fi
  local agent=${words[0]}
  [[ $agent == \~* ]] && agent=agent

  # agent takes a subcommand as its first word after the remote options (--host HOST, --cd DIR,
  # --remote-bin PATH); anything else is a prompt. `first` is that word's index.
  local sub= first=1
  while ((first < cword)) && [[ ${words[first]} == @(--host|--cd|--remote-bin) ]]; do
    ((first += 2))
  done
  if ((cword > first)); then
    case ${words[first]} in
      ls | attach | resume | fork | steer | wait | rm | undo | diff | trust | daemon | mcp) sub=${words[first]} ;;
    esac
  fi
  case $prev in
    --host)
      COMPREPLY=($(compgen -A hostname -- "$cur"))
      return
      ;;
    --cd | --remote-bin)
      return  # a path on the remote host: nothing here to complete it from
      ;;
  esac

  case $sub in
    ls)
      COMPREPLY=($(compgen -W '-a --all --json -l --long --help' -- "$cur"))
      ;;
    attach)
      if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W '-r --read-only --plain --help' -- "$cur"))
      else
        COMPREPLY=($(compgen -W "$(_agent_session_ids "$agent")" -- "$cur"))
      fi
      ;;
    resume)
      if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W '-y --yes --plain --help' -- "$cur"))
      else
        COMPREPLY=($(compgen -W "$(_agent_session_ids "$agent")" -- "$cur"))
      fi
      ;;
    steer | wait)
      if [[ $prev == --for ]]; then
        COMPREPLY=($(compgen -W 'approval idle' -- "$cur"))
      elif [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$([[ $sub == wait ]] && echo --for) --help" -- "$cur"))
      elif ((cword == first + 1)); then
        COMPREPLY=($(compgen -W "$(_agent_session_ids "$agent")" -- "$cur"))
      fi
      ;;
    fork)
      if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W '--help' -- "$cur"))
      elif ((cword == first + 1)); then
        COMPREPLY=($(compgen -W "$(_agent_session_ids "$agent")" -- "$cur"))
      fi
      ;;
    rm)
      if [[ $prev == --older-than ]]; then
        COMPREPLY=($(compgen -W '1d 7d 30d 90d' -- "$cur"))
      elif [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W '--older-than --help' -- "$cur"))
      else
        COMPREPLY=($(compgen -W "$(_agent_session_ids "$agent")" -- "$cur"))
      fi
      ;;
    undo)
      if [[ $prev == --turns ]]; then
        COMPREPLY=($(compgen -W '1 2 3' -- "$cur"))
      elif [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W '--turns -y --yes --overwrite --help' -- "$cur"))
      else
        COMPREPLY=($(compgen -W "$(_agent_session_ids "$agent")" -- "$cur"))
      fi
      ;;
    diff)
      if [[ $prev == --turn ]]; then
        :
      elif [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W '--turn --help' -- "$cur"))
      else
        COMPREPLY=($(compgen -W "$(_agent_session_ids "$agent")" -- "$cur"))
      fi
      ;;
    trust)
      [[ $cur == -* ]] && COMPREPLY=($(compgen -W '-y --yes --revoke --sessions --help' -- "$cur"))
      ;;
    daemon)
      if ((cword == first + 1)); then
        COMPREPLY=($(compgen -W 'status stop' -- "$cur"))
      elif [[ ${words[first + 1]} == stop && $cur == -* ]]; then
        COMPREPLY=($(compgen -W '-f --force' -- "$cur"))
      fi
      ;;
    mcp)
      if ((cword == first + 1)); then
        COMPREPLY=($(compgen -W 'add ls rm approve' -- "$cur"))
      elif [[ ${words[first + 1]} == add && $cur == -* ]]; then
        COMPREPLY=($(compgen -W '--url --' -- "$cur"))
      elif [[ ${words[first + 1]} == ls && $cur == -* ]]; then
        COMPREPLY=($(compgen -W '--check' -- "$cur"))
      fi
      ;;
    *)
      # Without bash-completion, --resume=ID arrives as three words: --resume, =, ID.
      if [[ $prev == -r || $prev == --resume ||
            ($prev == = && ${words[cword - 2]} == --resume) ]]; then
        COMPREPLY=($(compgen -W "$(_agent_session_ids "$agent")" -- "$cur"))
        return
      fi
      if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W '--json --json-snapshot -y --yes --auto --accept-edits --plan --read-only --plain -r --resume -c --continue
                                  -p --print --model --host --cd --remote-bin --version -h
                                  --help' -- "$cur"))
      elif ((cword == first)); then
        COMPREPLY=($(compgen -W 'ls attach resume fork steer wait rm undo diff trust daemon mcp sandbox acp' -- "$cur"))
      fi
      ;;
  esac
} && complete -F _agent agent
