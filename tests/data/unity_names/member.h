// Fixture of lint.UnityNameCheckFindsACapturableCall: a class whose member shares a file-local name.
struct S {
    int other(int);
};
