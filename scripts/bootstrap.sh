#!/usr/bin/env bash
# Idempotent installer shared by `make dev` and `make test`: uv in .tools/, the project venv,
# Debian's redis-server and chromium (the web client's browser tests), the web client's npm
# packages from web/package-lock.json (`npm ci`), the Cloud Tasks emulator in a venv of its
# own (it pins protobuf<5, which the project's google-cloud libraries cannot use) and checkov,
# the terraform scanner, in another (its large dependency tree must not move the project's
# pins). A stamp skips all of it when nothing that feeds it has changed.
set -euo pipefail
cd "$(dirname "$0")/.."
SELF=scripts/bootstrap.sh

UV_VERSION=0.13.8
TASKS_VENV=.tools/tasks-venv
# Pinned as a set: the emulator declares only lower bounds and protobuf<5.
TASKS_PACKAGES=(
    gcloud-tasks-emulator==0.6.2
    google-cloud-tasks==2.23.0
    google-api-core==2.30.3
    protobuf==4.25.9
    grpcio==1.85.1
    proto-plus==1.28.2
    pyyaml==6.0.3
    pyjwt==2.15.1
    cryptography==50.0.2
)
CHECKOV_VENV=.tools/checkov-venv
CHECKOV_VERSION=3.3.30
# The contract fuzzer of tests/e2e/test_contract_fuzz.py, pinned whole (uv pip compile).
FUZZ_VENV=.tools/schemathesis-venv
FUZZ_REQUIREMENTS=scripts/tools/schemathesis.txt
STAMP=.tools/bootstrap.stamp
# Vite 8 needs Node.js 20.19 or newer (the machine image has 20).
NODE_MIN=20.19
APT_PACKAGES=(redis-server chromium)

python_bin() { command -v python3.11 || command -v python3; }

wanted_stamp() {
    { cat pyproject.toml uv.lock "$SELF" "$FUZZ_REQUIREMENTS" web/package.json web/package-lock.json
      echo "$UV_VERSION ${TASKS_PACKAGES[*]} checkov==$CHECKOV_VERSION"; } \
        | sha256sum | cut -d' ' -f1
}

installed() {
    [[ -f $STAMP && "$(cat "$STAMP")" == "$(wanted_stamp)" ]] \
        && [[ -x .venv/bin/python && -x $TASKS_VENV/bin/python && -x $CHECKOV_VENV/bin/checkov ]] \
        && [[ -x $FUZZ_VENV/bin/schemathesis && -d web/node_modules ]] \
        && have redis-server && have chromium && have node
}

have() { command -v "$1" >/dev/null; }

node_recent() {
    have node && node -e '
        const [major, minor] = process.versions.node.split(".").map(Number);
        const [wantMajor, wantMinor] = process.argv[1].split(".").map(Number);
        process.exit(major > wantMajor || (major === wantMajor && minor >= wantMinor) ? 0 : 1);
    ' "$NODE_MIN"
}

if installed; then
    exit 0
fi

missing=()
for package in "${APT_PACKAGES[@]}"; do
    have "$package" || missing+=("$package")
done
have node || missing+=(nodejs npm)
if (( ${#missing[@]} )); then
    sudo=""
    [[ $(id -u) -eq 0 ]] || sudo="sudo"
    echo "bootstrap: installing ${missing[*]} (apt)"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
fi
if ! node_recent; then
    echo "bootstrap: the web client needs Node.js $NODE_MIN or newer; found" \
        "$(node --version 2>/dev/null || echo none)" >&2
    exit 1
fi

if [[ "$(.tools/bin/uv --version 2>/dev/null)" != "uv $UV_VERSION"* ]]; then
    echo "bootstrap: installing uv $UV_VERSION into .tools/"
    "$(python_bin)" -m venv .tools
    .tools/bin/pip install -q "uv==$UV_VERSION"
fi
UV=.tools/bin/uv
export UV_PYTHON_DOWNLOADS=never  # use the machine's Python 3.11; there is no internet for more

echo "bootstrap: syncing .venv"
$UV sync --locked --all-extras --group dev

echo "bootstrap: installing the Cloud Tasks emulator into $TASKS_VENV"
[[ -x $TASKS_VENV/bin/python ]] || $UV venv -q --python "$(python_bin)" "$TASKS_VENV"
$UV pip install --python "$TASKS_VENV/bin/python" "${TASKS_PACKAGES[@]}"

echo "bootstrap: installing checkov $CHECKOV_VERSION into $CHECKOV_VENV"
[[ -x $CHECKOV_VENV/bin/python ]] || $UV venv -q --python "$(python_bin)" "$CHECKOV_VENV"
$UV pip install -q --python "$CHECKOV_VENV/bin/python" "checkov==$CHECKOV_VERSION"

echo "bootstrap: installing schemathesis into $FUZZ_VENV"
[[ -x $FUZZ_VENV/bin/python ]] || $UV venv -q --python "$(python_bin)" "$FUZZ_VENV"
$UV pip install -q --python "$FUZZ_VENV/bin/python" -r "$FUZZ_REQUIREMENTS"

echo "bootstrap: installing the web client's npm packages (npm ci)"
(cd web && npm ci --no-audit --no-fund --loglevel=error)

wanted_stamp >"$STAMP"
echo "bootstrap: done"
