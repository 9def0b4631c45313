from validator.cli.entry import main

main()
