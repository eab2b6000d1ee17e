#!/usr/bin/env bash
# Starts and stops `palladium agent` on TPU VMs through `gcloud compute tpus tpu-vm ssh`, with a
# fresh CURVE key pair per VM for the authenticated link.
#
#   scripts/launch_tpu_agents.sh start --coordinator tcp://HOST:PORT \
#       --server-key keys/coordinator.key --allow keys/agents --zone us-east5-b VM [VM...]
#   scripts/launch_tpu_agents.sh stop --zone us-east5-b VM [VM...]
#
# start, for each VM: makes a key pair (palladium keys new VM), puts VM.key into the --allow
# directory (a running coordinator with `--allow DIR` picks it up when the agent knocks),
# copies the secret key (mode 0600) and the coordinator's public key to ~/.palladium/ on the VM
# with `gcloud compute tpus tpu-vm scp`, deletes the local copy of the secret, and starts the
# agent in the background there (pid in ~/.palladium/agent.pid, log in ~/.palladium/agent.log).
# stop sends SIGTERM (the agent says bye, so the coordinator requeues its jobs at once) and
# waits for it to exit. Every key stays on the machine that needs it: the coordinator's secret
# never leaves, and no API key is passed to a VM.
#
# Options: --project P, --zone Z (both passed to gcloud), --worker W (default all),
# --backend tpu|interpret (default tpu), --slots K (default 4: one per chip of a v6e-4),
# --palladium PATH (the binary on the VM, default palladium),
# --gcloud CMD (default gcloud; tests put a fake one on PATH instead).
set -euo pipefail

# usage [STATUS]: the header above; asked for (--help) it is the answer, exit 0; otherwise 2.
usage() { sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
die() { echo "launch_tpu_agents: $*" >&2; exit 2; }

[ $# -ge 1 ] || usage
action="$1"; shift
case "$action" in start|stop) ;; -h|--help) usage 0 ;; *) die "unknown action '$action' (start or stop)";; esac

coordinator="" server_key="" allow="" zone="" project="" worker="all" backend="tpu" slots=4
palladium_remote="palladium" gcloud="${GCLOUD:-gcloud}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
palladium_local="${PALLADIUM_BIN:-$root/build/palladium}"
vms=()
while [ $# -gt 0 ]; do
  case "$1" in
    --coordinator) coordinator="$2"; shift 2 ;;
    --server-key) server_key="$2"; shift 2 ;;
    --allow) allow="$2"; shift 2 ;;
    --zone) zone="$2"; shift 2 ;;
    --project) project="$2"; shift 2 ;;
    --worker) worker="$2"; shift 2 ;;
    --backend) backend="$2"; shift 2 ;;
    --slots) slots="$2"; shift 2 ;;
    --palladium) palladium_remote="$2"; shift 2 ;;
    --gcloud) gcloud="$2"; shift 2 ;;
    --*) die "unknown option $1" ;;
    *) vms+=("$1"); shift ;;
  esac
done
((${#vms[@]})) || die "name at least one TPU VM"
[ -n "$zone" ] || die "--zone is required"
for vm in "${vms[@]}"; do
  [[ "$vm" =~ ^[a-z]([-a-z0-9]*[a-z0-9])?$ ]] || die "'$vm' is not a TPU VM name"
done
where=(--zone "$zone")
[ -z "$project" ] || where+=(--project "$project")

remote() {  # remote VM COMMAND
  "$gcloud" compute tpus tpu-vm ssh "$1" "${where[@]}" --worker="$worker" --command "$2"
}

if [ "$action" = start ]; then
  [ -n "$coordinator" ] || die "--coordinator tcp://HOST:PORT is required"
  [[ "$coordinator" == tcp://* ]] || die "--coordinator must be a tcp:// endpoint"
  [ -f "$server_key" ] || die "--server-key must be the coordinator's public .key file"
  grep -q "secret-key" "$server_key" && die "$server_key holds a secret key: give the public .key"
  [ -n "$allow" ] || die "--allow DIR (the coordinator's allowlist directory) is required"
  [ "$backend" = tpu ] || [ "$backend" = interpret ] || die "--backend must be tpu or interpret"
  [[ "$slots" =~ ^[1-9][0-9]*$ ]] || die "--slots must be a positive integer"
  mkdir -p "$allow"
  secrets="$(mktemp -d)"
  trap 'rm -rf "$secrets"' EXIT
  chmod 700 "$secrets"
  for vm in "${vms[@]}"; do
    if [ -e "$allow/$vm.key" ]; then
      # A VM launched before keeps its place in the allowlist under a fresh key.
      mv "$allow/$vm.key" "$allow/$vm.key.replaced-$(date +%s)"
    fi
    "$palladium_local" keys new "$vm" --dir "$secrets" >/dev/null
    mv "$secrets/$vm.key" "$allow/$vm.key"
    remote "$vm" "mkdir -p ~/.palladium && chmod 700 ~/.palladium"
    "$gcloud" compute tpus tpu-vm scp "$secrets/$vm.key_secret" "$server_key" \
      "$vm:.palladium/" "${where[@]}" --worker="$worker"
    rm -f "$secrets/$vm.key_secret"
    key_name="$(basename "$server_key")"
    remote "$vm" "cd ~/.palladium && mv -f $vm.key_secret agent.key_secret && chmod 600 agent.key_secret && \
mv -f $key_name coordinator.key && \
if [ -f agent.pid ] && kill -0 \$(cat agent.pid) 2>/dev/null; then echo 'an agent is already running' >&2; exit 1; fi; \
nohup $palladium_remote agent --connect $coordinator --server-key ~/.palladium/coordinator.key \
--key ~/.palladium/agent.key_secret --backend $backend --slots $slots --agent-id $vm \
> ~/.palladium/agent.log 2>&1 < /dev/null & echo \$! > ~/.palladium/agent.pid"
    echo "started palladium agent on $vm (allowlisted as $allow/$vm.key)"
  done
else
  for vm in "${vms[@]}"; do
    remote "$vm" "cd ~/.palladium 2>/dev/null && [ -f agent.pid ] || { echo 'no agent running' >&2; exit 0; }; \
pid=\$(cat agent.pid); kill -TERM \$pid 2>/dev/null || true; \
for i in \$(seq 1 100); do kill -0 \$pid 2>/dev/null || break; sleep 0.1; done; \
kill -0 \$pid 2>/dev/null && kill -KILL \$pid; rm -f agent.pid"
    echo "stopped palladium agent on $vm"
  done
fi
