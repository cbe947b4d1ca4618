#!/usr/bin/env bash
# Installs headless Chromium and its WebDriver (Debian packages chromium and
# chromium-driver) for the live page's browser test (runtime/sgkafka
# TestLivePageBrowser). A no-op when both are installed. Needs apt-get and root
# (CI machines are Debian, as root); prints the paths it provides.
#
# Usage: scripts/chromium.sh [install|check]
#   install  (default) apt-get install chromium chromium-driver when missing
#   check    exit 3 when either is missing, without installing
set -euo pipefail

log() { echo "chromium.sh: $*" >&2; }

have() { [[ -x /usr/bin/chromium && -x /usr/bin/chromedriver ]]; }

case ${1:-install} in
check)
	have || exit 3
	;;
install)
	if ! have; then
		command -v apt-get >/dev/null || { log "apt-get not found: install chromium and chromium-driver by hand"; exit 1; }
		sudo=()
		if [[ $(id -u) != 0 ]]; then
			command -v sudo >/dev/null || { log "not root and no sudo: cannot install chromium"; exit 1; }
			sudo=(sudo)
		fi
		log "installing chromium and chromium-driver"
		export DEBIAN_FRONTEND=noninteractive
		"${sudo[@]}" apt-get update -qq >/dev/null || log "apt-get update failed; trying the install with the lists there are"
		"${sudo[@]}" apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null
		have || { log "chromium or chromedriver missing after apt-get install"; exit 1; }
	fi
	;;
*)
	sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
echo "STREAMGEN_CHROMIUM=/usr/bin/chromium"
echo "STREAMGEN_CHROMEDRIVER=/usr/bin/chromedriver"
