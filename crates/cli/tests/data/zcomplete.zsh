# Complete LINE in an interactive zsh whose completion for ioscope and fio is SCRIPT,
# and print every match offered, one per line. Usage: zsh -f zcomplete.zsh SCRIPT LINE
# A real interactive shell on a pseudo-terminal, as a user's TAB: each match is caught
# where the completion system adds it (a compadd wrapper). Input is sent only once the
# shell shows its prompt (its line editor reads), so the terminal's own line editing
# never sees it.
zmodload zsh/zpty || exit 2
script=$1 line=$2
out=$(mktemp) || exit 2
dir=$(mktemp -d) || exit 2
cp -- "$script" "$dir/_ioscope"
zpty z zsh -f -i || exit 2
prompt() { local x; zpty -r z x '*<P>*' || exit 3 }
zpty -w z "PS1='<''P>'; PROMPT2=''; RPROMPT=''; unsetopt AUTO_LIST LIST_AMBIGUOUS BEEP; fpath=($dir \$fpath); autoload -U compinit; compinit -u -D"
prompt
zpty -w z "compadd() { local -a __h; builtin compadd -O __h \"\$@\"; print -rl -- \$__h >> $out; builtin compadd \"\$@\"; }"
prompt
zpty -n -w z "$line"$'\t'$'\C-u'
zpty -w z "print -r -- __DONE__ >> $out"
prompt
zpty -d z
grep -vx __DONE__ $out | grep -v "^$" | sort -u
grep -qx __DONE__ $out; rc=$?
rm -rf -- $out $dir
exit $rc
