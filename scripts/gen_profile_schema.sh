#!/usr/bin/env bash
# Regenerates hw_profiles/README.md's key tables (between the BEGIN/END
# "generated" markers) from the schema, sim/profile/schema.cpp, with
# `iosim profiles --schema-markdown`. test_profiles fails while they differ.
#   scripts/gen_profile_schema.sh [IOSIM]   (default: build/sim/iosim)
set -euo pipefail
cd "$(dirname "$0")/.."
iosim=${1:-build/sim/iosim}
readme=hw_profiles/README.md
tables=$(mktemp)
trap 'rm -f "$tables"' EXIT
"$iosim" profiles --schema-markdown > "$tables"
awk -v tables="$tables" '
  /^<!-- BEGIN generated/ { print; while ((getline line < tables) > 0) print line; skip = 1; next }
  /^<!-- END generated/ { skip = 0 }
  !skip { print }
' "$readme" > "$readme.new"
mv "$readme.new" "$readme"
echo "regenerated the key tables of $readme"
