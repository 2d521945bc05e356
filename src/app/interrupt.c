// interrupt.c — SIGINT and SIGTERM for exports (see interrupt.h).
#include "interrupt.h"

#include <string.h>

volatile sig_atomic_t interrupt_signal;

static void on_signal(int sig) { interrupt_signal = sig; }

void interrupt_catch(Interrupt *s)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    interrupt_signal = 0;
    sigaction(SIGINT, &sa, &s->old_int);
    sigaction(SIGTERM, &sa, &s->old_term);
}

void interrupt_restore(const Interrupt *s)
{
    sigaction(SIGINT, &s->old_int, NULL);
    sigaction(SIGTERM, &s->old_term, NULL);
}

const char *interrupt_name(int sig) { return sig == SIGTERM ? "SIGTERM" : "SIGINT"; }

int interrupt_exit_code(int sig) { return sig == SIGTERM ? 143 : 130; }
