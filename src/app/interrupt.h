// interrupt.h — SIGINT and SIGTERM caught for the length of a command-line export
// or handout: the work stops at the next frame or page, removes what is partial and
// exits 130 / 143 with one line, instead of dying with a half-written file.
#ifndef ATTNVIZ_INTERRUPT_H
#define ATTNVIZ_INTERRUPT_H

#include <signal.h>

// The signal caught since interrupt_catch (SIGINT, SIGTERM), else 0.
extern volatile sig_atomic_t interrupt_signal;

typedef struct Interrupt {
    struct sigaction old_int, old_term;
} Interrupt;

// From now on SIGINT and SIGTERM set interrupt_signal (cleared here); the handlers
// before are kept in s.
void interrupt_catch(Interrupt *s);
// The handlers before interrupt_catch again.
void interrupt_restore(const Interrupt *s);

// "SIGINT" / "SIGTERM", and the exit code a shell gives for it (130 / 143).
const char *interrupt_name(int sig);
int interrupt_exit_code(int sig);

#endif
