// Fixture of lint.UnityNameCheckFindsACapturableCall (scripts/check_unity_names.py): file-local functions.
namespace {
int helper(int x) {
    return x;
}
}  // namespace

static int other(int x) {
    return x;
}

int use_local() {
    return helper(1) + other(2);
}
