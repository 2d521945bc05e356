// app.c — the interactive window (placeholder until the visualizer lands).
#include "app.h"

#include <SDL.h>
#include <stdio.h>

#include "cli.h"

int app_run(const AppOptions *opt)
{
    Lesson ls;
    Trace tr;
    if (!cli_load_and_forward(opt->lesson_path, &ls, &tr, stderr)) return 1;
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        fprintf(stderr, "attnviz: cannot open a window: %s\n", SDL_GetError());
        trace_free(&tr);
        lesson_free(&ls);
        return 1;
    }
    SDL_Window *win = SDL_CreateWindow("attnviz", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED,
                                       opt->width, opt->height, SDL_WINDOW_RESIZABLE);
    SDL_Renderer *r = win ? SDL_CreateRenderer(win, -1, 0) : NULL;
    for (bool quit = !r; !quit;) {
        SDL_Event e;
        while (SDL_PollEvent(&e))
            if (e.type == SDL_QUIT || (e.type == SDL_KEYDOWN && e.key.keysym.sym == SDLK_ESCAPE))
                quit = true;
        SDL_SetRenderDrawColor(r, 255, 255, 255, 255);
        SDL_RenderClear(r);
        SDL_RenderPresent(r);
        SDL_Delay(16);
    }
    if (r) SDL_DestroyRenderer(r);
    if (win) SDL_DestroyWindow(win);
    SDL_Quit();
    trace_free(&tr);
    lesson_free(&ls);
    return 0;
}
