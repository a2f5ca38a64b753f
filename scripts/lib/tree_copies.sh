# Shared by the folder checks (check-backend-folders.sh,
# check-architecture-folders.sh): logging, ccache for builds of copies, and
# copies of this tree. Source it after setting ROOT.

LAUNCH=()
if command -v ccache > /dev/null; then
  # Paths under the base dir hash as relative ones, so copies hit the cache.
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT}
  LAUNCH=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi

log() { printf '[%s] %s\n' "$(date +%T)" "$*"; }
fail() { log "FAIL: $*"; exit 1; }

# copy_tree DEST: the files git tracks, as they are in the working tree, made
# into a fresh one-commit repository (so `git status` there shows our changes).
copy_tree() {
  rm -rf "$1" && mkdir -p "$1"
  git -C "$ROOT" ls-files -z | (cd "$ROOT" && tar --null -T - -cf -) | tar -xf - -C "$1"
  git -C "$1" init -q && git -C "$1" add -A
  git -C "$1" -c user.name=check -c user.email=check@localhost commit -qm base
}
