# render stage: folded stacks -> trie (flame_fold) -> layout -> SVG (flame_svg, flame_palette),
# differential graphs (flame_diff); commands `flamegraph` and `diff`.
add_library(fg_render STATIC cmd_flamegraph.c cmd_diff.c flame_fold.c flame_layout.c
	flame_palette.c flame_svg.c flame_diff.c flame_cli.c)
target_link_libraries(fg_render PUBLIC fgcore fgproto m)
