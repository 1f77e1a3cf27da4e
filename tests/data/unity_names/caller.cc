// Fixture of lint.UnityNameCheckFindsACapturableCall: in one unity batch after local.cc, helper(1.0) would
// call local.cc's helper(int) instead of this declaration's; s.other(3) is a member call and cannot.
#include "member.h"

int helper(double);
int call(S& s) {
    return helper(1.0) + s.other(3);
}
