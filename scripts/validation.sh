#!/usr/bin/env bash
# Runs the conformance cases under the Khronos Vulkan validation layer (core checks and
# synchronization validation) and fails if the layer reports any error.
#
#   bash scripts/validation.sh            # quick selection: the first case of every op
#                                         # family and types and of every kernel pipeline
#   bash scripts/validation.sh --full     # the whole conformance suite
#   bash scripts/validation.sh --filter S # the cases whose op or name contains S (with --full:
#                                         # all of them, else the quick selection of them)
#   options: --gpu-av (also GPU-assisted validation: bounds checks inside the shaders,
#            several times slower), --allow VUID (also ignore this message id; repeatable)
#
# The layer is the one Debian's chromium ships (/usr/lib/chromium, installed here if
# missing, with sudo when not root) without a manifest; GGML_WGPU_VVL_LIBRARY names another
# libVkLayer_khronos_validation.so. The manifest goes to the user's cache folder
# (GGML_WGPU_CACHE, else $XDG_CACHE_HOME/ggml-wgpu or ~/.cache/ggml-wgpu, as setup.sh)
# under vvl/. The layer writes its messages to a log file; every "Validation Error"
# message counts except two that come from naga 0.19's SPIR-V output, not from our use of
# the API, and that newer SPIR-V rules forbid while drivers compute correctly:
# VUID-StandaloneSpirv-None-10684 (workgroup arrays decorated with an ArrayStride) and
# VUID-StandaloneSpirv-MemorySemantics-10871 (the relaxed atomics of our f16 stores carry
# the UniformMemory bit; fixed in wgpu after the version we link).
# Warnings are printed but do not fail the run. The loader's layer log proves that the
# device ran under the layer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

mode=quick
gpuav=0
filter=
allowed=(VUID-StandaloneSpirv-None-10684 VUID-StandaloneSpirv-MemorySemantics-10871)
while (($#)); do
	case "$1" in
	--full) mode=full ;;
	--quick) mode=quick ;;
	--gpu-av) gpuav=1 ;;
	--filter)
		[ $# -ge 2 ] || { echo "validation: --filter needs a substring" >&2; exit 2; }
		filter=$2
		shift
		;;
	--allow)
		[ $# -ge 2 ] || { echo "validation: --allow needs a message id" >&2; exit 2; }
		allowed+=("$2")
		shift
		;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*) echo "validation: unknown argument $1 (try --help)" >&2; exit 2 ;;
	esac
	shift
done

layer=${GGML_WGPU_VVL_LIBRARY:-/usr/lib/chromium/libVkLayer_khronos_validation.so}
if [ ! -f "$layer" ]; then
	if [ -n "${GGML_WGPU_VVL_LIBRARY:-}" ]; then
		echo "validation: $layer not found" >&2
		exit 2
	fi
	echo "validation: installing chromium for its Vulkan validation layer"
	sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
	start=$SECONDS
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
	echo "validation: chromium installed in $((SECONDS - start)) s"
	[ -f "$layer" ] || { echo "validation: chromium has no $layer" >&2; exit 2; }
fi

dir="${GGML_WGPU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ggml-wgpu}/vvl"
mkdir -p "$dir"
cat >"$dir/VkLayer_khronos_validation.json" <<EOF
{"file_format_version": "1.2.0", "layer": {"name": "VK_LAYER_KHRONOS_validation", "type": "GLOBAL", "library_path": "$layer", "api_version": "1.3.280", "implementation_version": "1", "description": "validation"}}
EOF

bash scripts/build.sh >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/wgpu-conformance" ./conformance/cmd/wgpu-conformance

export VK_LAYER_PATH="$dir"
export VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation
# Layer settings (VK_LAYER_<setting>): messages to a file, errors and warnings, no
# duplicate limit (every message counts), synchronization validation, and spirv-val on
# every shader module (no validation cache carried over from an earlier run).
export VK_LAYER_LOG_FILENAME="$work/layer.log"
export VK_LAYER_DEBUG_ACTION=VK_DBG_LAYER_ACTION_LOG_MSG
export VK_LAYER_REPORT_FLAGS=error,warn
export VK_LAYER_ENABLE_MESSAGE_LIMIT=false
export VK_LAYER_VALIDATE_SYNC=true
export VK_LAYER_CHECK_SHADERS_CACHING=false
if ((gpuav)); then export VK_LAYER_GPUAV_ENABLE=true; fi
export VK_LOADER_DEBUG=layer

args=()
[ "$mode" = quick ] && args+=(-quick)
[ -n "$filter" ] && args+=(-filter "$filter")
echo "validation: $mode selection under $layer"
start=$(date +%s%N)
rc=0
"$work/wgpu-conformance" "${args[@]}" >"$work/stdout" 2>"$work/stderr" || rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
elapsed=$((ms / 1000)).$(printf '%03d' $((ms % 1000)))
touch "$work/layer.log"

# The run itself: its header, failures and, with --full, the conformance table per op and
# types (the loader's layer log is left out).
if [ "$mode" = full ]; then
	grep -E '^(device under test|OK$|[0-9]+ problems:|FAIL|  +[A-Z_0-9(), ]+  |  +op  )' "$work/stdout" | sed 's/^/  /' || true
else
	grep -E '^(device under test|OK$|[0-9]+ problems:|FAIL| *TOTAL)' "$work/stdout" | sed 's/^/  /' || true
fi

if ! grep -q 'Inserted device layer "VK_LAYER_KHRONOS_validation"' "$work/stderr"; then
	echo "validation: the device did not run under the layer; the loader said:" >&2
	grep -F -e VK_LAYER_KHRONOS_validation -e "$layer" "$work/stderr" | sort -u >&2 || true
	exit 1
fi

# Messages start with "Validation <severity>: [ <message id> ]"; the lines up to the next
# such header belong to the message. Each source (the log file, and the run's output in
# case a layer writes there instead) is split into messages, NUL-separated, tagged with
# "<severity>\t<id>\t".
split() {
	awk 'function flush() { if (msg != "") printf "%s\t%s\t%s%c", sev, id, msg, 0; msg = "" }
		/^Validation [A-Za-z ]*: / {
			flush()
			sev = $0; sub(/^Validation /, "", sev); sub(/:.*/, "", sev)
			id = "?"
			if (match($0, /\[ *[^] ]+ *\]/)) { id = substr($0, RSTART + 1, RLENGTH - 2); gsub(/ /, "", id) }
		}
		sev != "" { msg = msg $0 "\n" }
		END { flush() }' "$@"
}
is_allowed() {
	local a
	for a in "${allowed[@]}"; do [ "$1" = "$a" ] && return 0; done
	return 1
}
errors=0 filtered=0 warnings=0
declare -A per_id=()
while IFS=$'\t' read -r -d '' sev id msg; do
	case "$sev" in
	Error)
		if is_allowed "$id"; then
			filtered=$((filtered + 1))
			continue
		fi
		errors=$((errors + 1))
		# The first message of each id in full; the others only count.
		[ -n "${per_id["error $id"]:-}" ] || printf '%s\n' "$msg" >>"$work/errors"
		per_id["error $id"]=$((${per_id["error $id"]:-0} + 1))
		;;
	*)
		warnings=$((warnings + 1))
		per_id["${sev,,} $id"]=$((${per_id["${sev,,} $id"]:-0} + 1))
		;;
	esac
done < <(split "$work/layer.log"; split "$work/stdout" "$work/stderr")

if [ -f "$work/errors" ]; then
	echo
	echo "validation: the first error of each message id:"
	cat "$work/errors"
fi
if ((${#per_id[@]})); then
	echo "validation: messages by id:"
	for k in "${!per_id[@]}"; do printf '  %5d  %s\n' "${per_id[$k]}" "$k"; done | sort -k2
fi
echo "validation: $errors errors, $warnings warnings (not counted), $filtered filtered (${allowed[*]}); run ${elapsed} s"
if ((rc != 0)); then
	echo "validation: the conformance run failed (exit $rc):" >&2
	grep -v -E '^(DEBUG|INFO|WARNING|ERROR)? *\|? *LAYER:' "$work/stderr" | tail -n 20 >&2 || true
	tail -n 30 "$work/stdout" >&2
	exit 1
fi
((errors == 0))
