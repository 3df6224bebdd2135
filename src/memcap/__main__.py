from memcap.cli import main

main()
