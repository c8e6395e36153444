# bash completion for flakyctl(1).
#
# The commands and their options come from the flakyctl being completed
# (`flakyctl help --all-options`: one line per option, from the same
# command table that --help and the man page test read), so this file
# never lags behind a new command or option.

# The table: "CMD<TAB>--name<TAB>-x<TAB>ARG" lines, "global" for the
# options every command takes, a line of the name alone per command.
_flakyctl_table()
{
	"${1:-flakyctl}" help --all-options 2>/dev/null
}

# Complete the value of an option whose argument is named $1.
_flakyctl_value()
{
	local cur=$2
	case $1 in
	FORMAT)	COMPREPLY=($(compgen -W "table json csv markdown tsv github junit" -- "$cur")) ;;
	K)	COMPREPLY=($(compgen -W "suite alone ingested all" -- "$cur")) ;;
	FILE|PATH)
		COMPREPLY=($(compgen -f -- "$cur")) ;;
	*)	COMPREPLY=() ;;
	esac
}

_flakyctl()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=""
	local table cmd="" i w arg
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD-1]}
	table=$(_flakyctl_table "${COMP_WORDS[0]}") || return 0

	# The command: the first word that is no option nor an option's value.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		--db|--config|--socket|--format|--kind) ((i++)); continue ;;
		-*) continue ;;
		esac
		cmd=$w
		break
	done

	# A value after an option that takes one.
	if [[ $prev == -* ]]; then
		arg=$(printf '%s\n' "$table" | awk -F'\t' -v c="$cmd" -v o="$prev" \
		    '($1 == c || $1 == "global") && ($2 == o || $3 == o) { print $4; exit }')
		if [ -n "$arg" ] && [ "$arg" != "-" ]; then
			_flakyctl_value "$arg" "$cur"
			return 0
		fi
	fi

	if [ -z "$cmd" ]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--help --version $(printf '%s\n' \
			    "$table" | awk -F'\t' '$1 == "global" { print $2 }')" \
			    -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(printf '%s\n' "$table" |
			    awk -F'\t' 'NF == 1 { print $1 }')" -- "$cur"))
		fi
		return 0
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "--help $(printf '%s\n' "$table" |
		    awk -F'\t' -v c="$cmd" '$1 == c || $1 == "global" { print $2 }')" \
		    -- "$cur"))
		return 0
	fi
	case $cmd in
	help)	COMPREPLY=($(compgen -W "$(printf '%s\n' "$table" |
		    awk -F'\t' 'NF == 1 { print $1 }')" -- "$cur")) ;;
	init|analyze|scan)
		COMPREPLY=($(compgen -d -- "$cur")) ;;
	*)	COMPREPLY=($(compgen -f -- "$cur")) ;;
	esac
	return 0
}
complete -F _flakyctl flakyctl
